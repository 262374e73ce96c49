//! Writes a generator's files into a directory and prints its truth map and manifest, for
//! inspecting data without the `lrab` CLI:
//! `cargo run -q -p lrab-generators --example write_generated -- lh01 4101 /tmp/out`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, seed, dir] = args.as_slice() else {
        eprintln!("usage: write_generated <generator> <seed> <dir>");
        return ExitCode::from(2);
    };
    let Ok(seed) = seed.parse::<u64>() else {
        eprintln!("error: seed '{seed}' is not an unsigned integer");
        return ExitCode::from(2);
    };
    let generated = match lrab_generators::generate(name, seed) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (path, bytes) in &generated.files {
        let target = std::path::Path::new(dir).join(path);
        if let Err(e) =
            std::fs::create_dir_all(target.parent().unwrap_or(std::path::Path::new(dir)))
                .and_then(|_| std::fs::write(&target, bytes))
        {
            eprintln!("error: writing {}: {e}", target.display());
            return ExitCode::FAILURE;
        }
    }
    for (key, variants) in &generated.truth {
        println!("{key} = {variants:?}");
    }
    print!("{}", lrab_generators::manifest(&generated));
    ExitCode::SUCCESS
}
