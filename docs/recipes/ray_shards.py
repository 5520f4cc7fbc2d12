#!/usr/bin/env python3
"""Run beamtrace's work as N Ray tasks, one shard each, then merge the shards.

    python ray_shards.py --shards 8 -- batch configs/batch/example.yaml --out out/example
    python ray_shards.py --shards 4 --gpus-per-task 1 -- run --scenario drive.yaml \
        --sensor vlp-16 --out /shared/out/drive

Everything after `--` is a beamtrace command line (`run` or `batch`) that must name its
output folder with --out; each task runs it with `--shard i/N` added, then
`beamtrace merge OUT` checks the shards and writes poses.csv and index.json.

Without RAY_ADDRESS Ray starts a local cluster on this machine; with it (or --address)
the tasks run on that cluster, which needs the beamtrace binary at the same path on
every node and --out on storage they share. A failed task is retried (--retries); the
shard resumes from its journal and keeps the frames it finished.
"""
import argparse
import os
import subprocess
import sys

import ray


def output_folder(args):
    for i, a in enumerate(args):
        if a == "--out" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--out="):
            return a[len("--out="):]
    sys.exit("the beamtrace command line must give --out: the shards and merge share it")


@ray.remote
def shard(binary, args, index, count):
    cmd = [binary, *args, "--shard", f"{index}/{count}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"shard {index}/{count} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shards", type=int, required=True, help="N, the number of tasks")
    p.add_argument("--beamtrace", default="beamtrace", help="the binary (default: on PATH)")
    p.add_argument("--address", default=os.environ.get("RAY_ADDRESS"), help="Ray cluster")
    p.add_argument("--cpus-per-task", type=float, default=1)
    p.add_argument("--gpus-per-task", type=float, default=0)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- run|batch ... --out OUT")
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command or a.shards < 1:
        p.error("give --shards N and, after --, a beamtrace run or batch command line")
    out = output_folder(command)
    ray.init(address=a.address)
    task = shard.options(
        num_cpus=a.cpus_per_task, num_gpus=a.gpus_per_task, max_retries=a.retries,
        retry_exceptions=True,
    )
    refs = [task.remote(a.beamtrace, command, i, a.shards) for i in range(a.shards)]
    for text in ray.get(refs):
        sys.stdout.write(text)
    merged = subprocess.run([a.beamtrace, "merge", out], capture_output=True, text=True)
    sys.stdout.write(merged.stdout)
    if merged.returncode != 0:
        sys.exit(f"merge failed:\n{merged.stderr}")


if __name__ == "__main__":
    main()
