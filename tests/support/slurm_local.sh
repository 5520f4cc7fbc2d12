#!/usr/bin/env bash
# A one-node Slurm cluster for the tests: `slurm_local.sh start DIR` writes DIR/slurm.conf
# (this host, its CPUs, no GPUs, no accounting), starts munged if none runs, then
# slurmctld and slurmd with their state, logs and pid files in DIR, and waits until the
# node takes jobs; `slurm_local.sh stop DIR` stops both daemons. Needs root (the daemons
# run as root here) and the Debian packages slurm-wlm and munge (scripts/setup-test.sh).
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?the cluster folder}
export SLURM_CONF="$dir/slurm.conf"

start() {
  mkdir -p "$dir/state" "$dir/spool"
  local host cpus
  host=$(hostname)
  cpus=$(nproc)
  cat >"$SLURM_CONF" <<CONF
ClusterName=beamtrace-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AuthType=auth/munge
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge
    chown munge:munge /run/munge
    su -s /bin/sh munge -c /usr/sbin/munged
  fi
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  for _ in $(seq 1 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -q idle; then return 0; fi
    sleep 0.5
  done
  echo "the node did not become idle; see $dir/*.log" >&2
  exit 1
}

stop() {
  for d in slurmd slurmctld; do
    if [ -f "$dir/$d.pid" ]; then kill "$(cat "$dir/$d.pid")" 2>/dev/null || true; fi
  done
}

"$cmd"
