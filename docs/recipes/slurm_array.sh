#!/bin/bash
# beamtrace on Slurm: one array task per shard, one GPU each, then a merge that runs
# when every task succeeded.
#
#   sbatch --array=0-15 docs/recipes/slurm_array.sh configs/batch/example.yaml /shared/out/example
#   # prints "Submitted batch job 1234"; then:
#   sbatch --dependency=afterok:1234 --wrap "beamtrace merge /shared/out/example"
#
# The shard count is the array's size (SLURM_ARRAY_TASK_COUNT); array ids must run
# 0..N-1. A requeued or resubmitted task resumes its shard from its journal. The output
# folder must be on storage every node sees.
#SBATCH --job-name=beamtrace
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --requeue
#SBATCH --output=beamtrace-%A_%a.log
set -euo pipefail
manifest=${1:?give the batch manifest}
out=${2:?give the output folder}
exec beamtrace batch "$manifest" --out "$out" \
  --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"
