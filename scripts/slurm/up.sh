#!/bin/bash
# A single-node Slurm cluster on this machine (Debian 12 slurm-wlm 22.05 + munge), for the
# opt-in check in check.sh. Runs as root, needs no systemd: the daemons are started by hand.
#
#   scripts/slurm/up.sh          # idempotent; prints "slurm up: node <host> idle"
#   scripts/slurm/down.sh        # stops jobs and daemons by pid
#
# Installs (once) slurmctld, slurmd, slurm-client and munge without recommends. Re-running with
# the cluster up and the same configuration does nothing; if the configuration changed or a
# daemon died, both Slurm daemons restart with a wiped state (job ids start again at 1).
# Exit 77 when this machine cannot have a cluster (not root, no apt-get, install refused).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/daemons.sh"
export DEBIAN_FRONTEND=noninteractive
skip() { echo "slurm: cannot set up a cluster here: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (installs packages, runs slurmd)"

# --- packages ---------------------------------------------------------------------------
have_all() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; } >/dev/null
if ! have_all; then
  command -v apt-get >/dev/null || skip "no apt-get to install slurm-wlm"
  apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed"
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null 2>&1 ||
    skip "apt-get install slurmctld slurmd slurm-client munge failed"
  have_all || skip "slurm packages installed but their programs are missing"
fi

# --- munge (runs as user munge; systemd would have made /run/munge) ----------------------
install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
install -d -o munge -g munge -m 0711 /var/lib/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  runuser -u munge -- /usr/sbin/mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null || { echo "slurm: munge does not work" >&2; exit 1; }

# --- slurm.conf ----------------------------------------------------------------------------
# The node line comes from the hardware (slurmd -C) with 95 % of the memory it measures, so
# the node is never "inval"; addresses are loopback so no host name has to resolve.
HOST=$(uname -n); HOST=${HOST%%.*}
NODE=$(slurmd -C | head -n1)
MEM=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$NODE")
NODE=$(sed "s/RealMemory=[0-9]*/RealMemory=$(( MEM * 95 / 100 ))/" <<<"$NODE")
install -d -o slurm -g slurm -m 0755 /var/lib/slurm /var/lib/slurm/slurmctld /var/log/slurm /run/slurm
install -d -o root -g root -m 0755 /var/lib/slurm/slurmd /etc/slurm
# Why these settings: no cgroup plugins (they fail silently in VMs without a full cgroup
# tree); CR_CPU so array tasks share the node instead of each taking all memory; a 10 s
# credential life and a 1 s scheduler pass so a requeued task runs again ~11 s later instead
# of ~2 minutes; KillWait=5 so cancelling a task that traps SIGTERM takes 5 s, not 30.
cat > /etc/slurm/slurm.conf.next <<CONF
ClusterName=lrabci
SlurmctldHost=${HOST}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
AuthInfo=cred_expire=10
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
KillWait=5
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
${NODE} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

if cmp -s /etc/slurm/slurm.conf.next /etc/slurm/slurm.conf &&
   daemon_alive /run/slurm/slurmctld.pid slurmctld && daemon_alive /run/slurm/slurmd.pid slurmd; then
  rm -f /etc/slurm/slurm.conf.next
else
  daemon_stop /run/slurm/slurmd.pid slurmd
  daemon_stop /run/slurm/slurmctld.pid slurmctld
  mv /etc/slurm/slurm.conf.next /etc/slurm/slurm.conf
  # Old state would bring back old jobs (and a changed ClusterName is fatal).
  rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/*
  /usr/sbin/slurmctld          # daemonizes and drops to SlurmUser
  /usr/sbin/slurmd -N "$HOST"  # daemonizes, stays root
fi

# --- wait for the node (about a second); fail fast when a daemon died -------------------
state=; t0=$SECONDS
while [ $(( SECONDS - t0 )) -lt 60 ]; do
  if [ $(( SECONDS - t0 )) -ge 5 ] &&
     ! { daemon_alive /run/slurm/slurmctld.pid slurmctld && daemon_alive /run/slurm/slurmd.pid slurmd; }; then
    state=daemon-died; break
  fi
  state=$(timeout 5 sinfo -h -N -n "$HOST" -o %t 2>/dev/null || true)
  case "$state" in idle|mix|alloc) break ;; esac
  sleep 0.5
done
case "$state" in
  idle|mix|alloc) echo "slurm up: node $HOST $state" ;;
  *)
    echo "slurm: node $HOST not ready ('$state')" >&2
    timeout 5 sinfo -N -o '%N %t %E' >&2 || true
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1 ;;
esac
