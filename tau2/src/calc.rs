//! The `calculate` tool: a Python-semantics evaluator for the characters upstream allows
//! (`0-9 + - * / ( ) .` and space), so `**`, `//`, int/float promotion and true division
//! behave as `eval` would; the result is `str(round(float(x), 2))`.

use crate::args::ToolError;
use crate::pyjson::{float_repr, round2};

#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(x) => x,
        }
    }
}

const SYNTAX: &str = "invalid syntax (<string>, line 1)";

#[derive(Debug, PartialEq, Clone)]
enum Tok {
    Num(String),
    Op(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, ToolError> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' => i += 1,
            b'0'..=b'9' | b'.' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                    i += 1;
                }
                let lit = &s[start..i];
                if lit.matches('.').count() > 1 || lit == "." {
                    return Err(SYNTAX.into());
                }
                if !lit.contains('.')
                    && lit.len() > 1
                    && lit.starts_with('0')
                    && lit.bytes().any(|d| d != b'0')
                {
                    return Err("leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers (<string>, line 1)".into());
                }
                out.push(Tok::Num(lit.to_string()));
            }
            b'*' if b.get(i + 1) == Some(&b'*') => {
                out.push(Tok::Op("**"));
                i += 2;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push(Tok::Op("//"));
                i += 2;
            }
            b'+' => {
                out.push(Tok::Op("+"));
                i += 1;
            }
            b'-' => {
                out.push(Tok::Op("-"));
                i += 1;
            }
            b'*' => {
                out.push(Tok::Op("*"));
                i += 1;
            }
            b'/' => {
                out.push(Tok::Op("/"));
                i += 1;
            }
            b'(' => {
                out.push(Tok::Op("("));
                i += 1;
            }
            b')' => {
                out.push(Tok::Op(")"));
                i += 1;
            }
            _ => return Err("Invalid characters in expression".into()),
        }
    }
    Ok(out)
}

struct P {
    t: Vec<Tok>,
    i: usize,
    depth: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn expr(&mut self) -> Result<Num, ToolError> {
        let mut l = self.term()?;
        loop {
            if self.is_op("+") {
                self.i += 1;
                let r = self.term()?;
                l = add(l, r, false)?;
            } else if self.is_op("-") {
                self.i += 1;
                let r = self.term()?;
                l = add(l, r, true)?;
            } else {
                return Ok(l);
            }
        }
    }
    fn term(&mut self) -> Result<Num, ToolError> {
        let mut l = self.factor()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op(o)) if ["*", "/", "//"].contains(o) => *o,
                _ => return Ok(l),
            };
            self.i += 1;
            let r = self.factor()?;
            l = mul(l, r, op)?;
        }
    }
    fn factor(&mut self) -> Result<Num, ToolError> {
        self.depth += 1;
        if self.depth > 200 {
            return Err("too many nested parentheses".into());
        }
        let r = if self.is_op("-") {
            self.i += 1;
            match self.factor()? {
                Num::Int(i) => Num::Int(-i),
                Num::Float(x) => Num::Float(-x),
            }
        } else if self.is_op("+") {
            self.i += 1;
            self.factor()?
        } else {
            let base = self.atom()?;
            if self.is_op("**") {
                self.i += 1;
                let e = self.factor()?;
                pow(base, e)?
            } else {
                base
            }
        };
        self.depth -= 1;
        Ok(r)
    }
    fn atom(&mut self) -> Result<Num, ToolError> {
        match self.peek().cloned() {
            Some(Tok::Num(lit)) => {
                self.i += 1;
                if lit.contains('.') {
                    lit.parse::<f64>()
                        .map(Num::Float)
                        .map_err(|_| ToolError::from(SYNTAX))
                } else {
                    match lit.parse::<i128>() {
                        Ok(i) => Ok(Num::Int(i)),
                        Err(_) => lit
                            .parse::<f64>()
                            .map(Num::Float)
                            .map_err(|_| ToolError::from(SYNTAX)),
                    }
                }
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                if self.is_op(")") {
                    return Err(
                        "float() argument must be a string or a real number, not 'tuple'".into(),
                    );
                }
                let v = self.expr()?;
                if !self.is_op(")") {
                    return Err("'(' was never closed (<string>, line 1)".into());
                }
                self.i += 1;
                Ok(v)
            }
            _ => Err(SYNTAX.into()),
        }
    }
}

fn add(l: Num, r: Num, sub: bool) -> Result<Num, ToolError> {
    Ok(match (l, r) {
        (Num::Int(a), Num::Int(b)) => {
            let v = if sub {
                a.checked_sub(b)
            } else {
                a.checked_add(b)
            };
            match v {
                Some(v) => Num::Int(v),
                None => Num::Float(if sub {
                    a as f64 - b as f64
                } else {
                    a as f64 + b as f64
                }),
            }
        }
        _ => Num::Float(if sub { l.f() - r.f() } else { l.f() + r.f() }),
    })
}

fn mul(l: Num, r: Num, op: &str) -> Result<Num, ToolError> {
    match op {
        "*" => Ok(match (l, r) {
            (Num::Int(a), Num::Int(b)) => a
                .checked_mul(b)
                .map(Num::Int)
                .unwrap_or(Num::Float(a as f64 * b as f64)),
            _ => Num::Float(l.f() * r.f()),
        }),
        "/" => {
            if r.f() == 0.0 {
                return Err(match (l, r) {
                    (Num::Int(_), Num::Int(_)) => "division by zero".into(),
                    _ => "float division by zero".into(),
                });
            }
            Ok(Num::Float(l.f() / r.f()))
        }
        _ => match (l, r) {
            (Num::Int(_), Num::Int(0)) => Err("integer division or modulo by zero".into()),
            (Num::Int(a), Num::Int(b)) => Ok(Num::Int(
                a.div_euclid(b)
                    - if (a.rem_euclid(b) != 0) && b < 0 {
                        1
                    } else {
                        0
                    },
            )),
            _ if r.f() == 0.0 => Err("float floor division by zero".into()),
            _ => Ok(Num::Float((l.f() / r.f()).floor())),
        },
    }
}

fn pow(b: Num, e: Num) -> Result<Num, ToolError> {
    match (b, e) {
        (Num::Int(a), Num::Int(n)) if n >= 0 => {
            let mut acc: i128 = 1;
            let mut overflow = false;
            for _ in 0..n.min(4096) {
                match acc.checked_mul(a) {
                    Some(v) => acc = v,
                    None => {
                        overflow = true;
                        break;
                    }
                }
                if acc == 0 || acc == 1 && a == 1 {
                    break;
                }
            }
            if a == -1 {
                return Ok(Num::Int(if n % 2 == 0 { 1 } else { -1 }));
            }
            if overflow || n > 4096 && a.abs() > 1 {
                let f = (a as f64).powf(n as f64);
                if f.is_infinite() {
                    return Err("int too large to convert to float".into());
                }
                return Ok(Num::Float(f));
            }
            Ok(Num::Int(acc))
        }
        _ => {
            let (x, y) = (b.f(), e.f());
            if x == 0.0 && y < 0.0 {
                return Err("0.0 cannot be raised to a negative power".into());
            }
            if x < 0.0 && y.fract() != 0.0 {
                return Err(
                    "float() argument must be a string or a real number, not 'complex'".into(),
                );
            }
            let v = x.powf(y);
            if v.is_infinite() {
                return Err("(34, 'Numerical result out of range')".into());
            }
            Ok(Num::Float(v))
        }
    }
}

/// Evaluate like upstream: character whitelist, Python `eval`, `round(float(x), 2)`, `str`.
pub fn calculate(expression: &str) -> Result<String, ToolError> {
    if !expression.chars().all(|c| "0123456789+-*/(). ".contains(c)) {
        return Err("Invalid characters in expression".into());
    }
    let toks = lex(expression)?;
    if toks.is_empty() {
        return Err("invalid syntax (<string>, line 0)".into());
    }
    let mut p = P {
        t: toks,
        i: 0,
        depth: 0,
    };
    let v = p.expr()?;
    if p.i != p.t.len() {
        return Err(SYNTAX.into());
    }
    let x = v.f();
    if x.is_infinite() {
        return Err("int too large to convert to float".into());
    }
    Ok(float_repr(round2(x)))
}

#[cfg(test)]
mod tests {
    use super::calculate;

    #[test]
    fn python_semantics() {
        assert_eq!(calculate("2 + 2").unwrap(), "4.0");
        assert_eq!(calculate("10 / 3").unwrap(), "3.33");
        assert_eq!(calculate("7 // 2").unwrap(), "3.0");
        assert_eq!(calculate("-7 // 2").unwrap(), "-4.0");
        assert_eq!(calculate("2 ** 10").unwrap(), "1024.0");
        assert_eq!(calculate("-2 ** 2").unwrap(), "-4.0");
        assert_eq!(calculate("2 ** -1").unwrap(), "0.5");
        assert_eq!(calculate("(1093.34 - 100) * 2").unwrap(), "1986.68");
        assert_eq!(calculate("0.1 + 0.2").unwrap(), "0.3");
        assert_eq!(
            calculate("1e5").unwrap_err().0,
            "Invalid characters in expression"
        );
        assert_eq!(calculate("1 / 0").unwrap_err().0, "division by zero");
        assert!(calculate("2 +").is_err());
        assert!(calculate("(2").is_err());
        assert!(calculate("").is_err());
    }
}
