# Shared by up.sh and down.sh (sourced, not run): is a daemon alive, and stopping it by the pid
# in its pid file. A zombie counts as dead: PID 1 on CI machines and containers may reap late or
# never, and /proc/<pid>/comm still names the daemon until it does.

# daemon_alive PIDFILE NAME
daemon_alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null
}

# daemon_stop PIDFILE NAME: SIGTERM, up to 10 s to exit, then SIGKILL; removes the pid file.
daemon_stop() {
  local pid i
  if ! daemon_alive "$1" "$2"; then rm -f "$1"; return 0; fi
  pid=$(cat "$1")
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 50); do daemon_alive "$1" "$2" || break; sleep 0.2; done
  if daemon_alive "$1" "$2"; then
    kill -KILL "$pid" 2>/dev/null || true
    for i in $(seq 25); do daemon_alive "$1" "$2" || break; sleep 0.2; done
  fi
  rm -f "$1"
}
