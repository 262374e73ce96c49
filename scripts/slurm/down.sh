#!/bin/bash
# Stops what up.sh started: every job, then slurmd, slurmctld and munged (by their pid files),
# and wipes the cluster's job state. Safe to run when nothing is up. The packages stay
# installed; to remove them as well:
#   apt-get purge -y --autoremove slurmctld slurmd slurm-client munge
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/daemons.sh"

if daemon_alive /run/slurm/slurmctld.pid slurmctld; then
  jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u)
  if [ -n "$jobs" ]; then
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null
    for _ in $(seq 60); do   # each job gets KillWait (5 s) between SIGTERM and SIGKILL
      [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
fi
daemon_stop /run/slurm/slurmd.pid slurmd
daemon_stop /run/slurm/slurmctld.pid slurmctld
daemon_stop /run/munge/munged.pid munged
# slurmctld cannot delete a pid file in root-owned /run, and Debian's prerm fails on a stale one.
rm -f /run/slurmctld.pid
rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/* 2>/dev/null
echo "slurm down"
