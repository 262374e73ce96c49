use lrab_safety::sandbox::*;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let b = if args.get(2).map(|s| s.as_str()) == Some("ns") { Sandbox::Namespaces } else { Sandbox::detect() };
    let wd = std::path::Path::new("/tmp/dbg15/w");
    let t = std::path::Path::new("/tmp/dbg15/t");
    std::fs::create_dir_all(wd).unwrap(); std::fs::create_dir_all(t).unwrap();
    let p = Policy { force: Some(b.clone()), ..Default::default() };
    let (mut c, _) = sandboxed_command(&args[1], wd, t, &p).unwrap();
    c.env("LRAB_T", t);
    match c.status() { Ok(s) => println!("status {s:?}"), Err(e) => println!("spawn error {e:?}") }
}
