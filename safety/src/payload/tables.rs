//! The call names the payload inspector looks for, by what the call does.

/// Calls that run a shell command line (first argument) or an argv list.
pub(super) const EXEC: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.execvp",
    "os.execv",
    "os.execl",
    "os.execlp",
    "os.spawnlp",
    "os.spawnvp",
    "pty.spawn",
    "commands.getoutput",
    "system",
    "exec",
    "qx",
    "execSync",
    "execFileSync",
    "spawnSync",
    "spawn",
    "execFile",
    "child_process.exec",
    "shell_exec",
    "passthru",
    "popen",
    "proc_open",
    "Open3.capture2",
    "Open3.popen3",
    "IO.popen",
    "Kernel.system",
    "%x",
];
pub(super) const RMTREE: &[&str] = &[
    "rmSync",
    "rmdirSync",
    "shutil.rmtree",
    "rmtree",
    "remove_tree",
    "FileUtils.rm_rf",
    "FileUtils.rm_r",
    "FileUtils.remove_dir",
    "fs.rmSync",
    "fs.rmdirSync",
    "fs.promises.rm",
    "fs.rm",
    "rimraf",
];
pub(super) const DELETE: &[&str] = &[
    "unlinkSync",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "unlink",
    "File.delete",
    "File.unlink",
    "fs.unlinkSync",
    "fs.unlink",
    "FileUtils.rm",
    "rmdir",
];
pub(super) const WRITE: &[&str] = &[
    "writeFileSync",
    "appendFileSync",
    "writeFile",
    "appendFile",
    "createWriteStream",
    "truncateSync",
    "chmodSync",
    "chownSync",
    "write_text",
    "write_bytes",
    "fs.writeFileSync",
    "fs.appendFileSync",
    "fs.writeFile",
    "fs.createWriteStream",
    "File.write",
    "file_put_contents",
    "os.truncate",
    "os.chmod",
    "os.chown",
    "fs.chmodSync",
    "fs.truncateSync",
];
pub(super) const TWO_PATH_WRITE: &[&str] = &[
    "shutil.copy",
    "shutil.copyfile",
    "shutil.copy2",
    "shutil.copytree",
    "shutil.move",
    "os.rename",
    "os.replace",
    "fs.copyFileSync",
    "fs.renameSync",
    "FileUtils.cp",
    "FileUtils.mv",
    "copy",
    "rename",
    "os.symlink",
    "os.link",
    "fs.symlinkSync",
    "fs.linkSync",
    "File.symlink",
    "File.link",
    "symlink",
    "link",
];

/// Text showing that a payload builds paths from the home directory.
pub(super) const HOME_REF: &[&str] = &[
    "expanduser",
    "HOME",
    "Path.home",
    "homedir",
    "ENV['HOME']",
    "$ENV{HOME}",
    "getenv",
];

/// Calls that decode a base64 or hex literal (whose result is a payload too).
pub(super) const DECODE: &[&str] = &[
    "b64decode",
    "base64.b64decode",
    "base64.decodebytes",
    "atob",
    "Buffer.from",
    "decode_base64",
    "unpack",
    "bytes.fromhex",
    "fromhex",
    "base64_decode",
];

/// Command-running calls that take a program and its arguments separately.
pub(super) const EXEC_PROGRAM_ARGS: &[&str] = &[
    "execFileSync",
    "spawnSync",
    "spawn",
    "execFile",
    "os.execvp",
    "os.execlp",
    "os.spawnlp",
];

/// `Path` methods that write (or delete); every other method on a path reads it.
pub(super) const PATH_WRITE_METHODS: &[&str] = &[
    "write_text",
    "write_bytes",
    "unlink",
    "rmdir",
    "touch",
    "mkdir",
    "chmod",
    "symlink_to",
    "hardlink_to",
];

/// Calls that open a file (for reading, or for writing by their mode argument).
pub(super) const OPEN: &[&str] = &[
    "open",
    "File.open",
    "io.open",
    "codecs.open",
    "openSync",
    "fopen",
    "readFileSync",
    "File.read",
    "file_get_contents",
];

/// Python that reaches code by reflection: never excused by a literal import or a decode.
pub(super) const PY_REFLECTIVE: &[&str] = &[
    "getattr(",
    "__dict__",
    "vars(",
    "globals(",
    "__getattribute__",
    "importlib",
    "methodcaller",
];

/// Python that builds and runs code at run time, besides reflection ([`PY_REFLECTIVE`]).
pub(super) const PY_EXEC: &[&str] = &["exec(", "eval(", "compile(", "__import__("];
