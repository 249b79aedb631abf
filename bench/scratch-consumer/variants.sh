#!/bin/bash
# Throwaway: one run per option set given as arguments, same N.
N=${N:-20000}
for v in "$@"; do
  echo "== ${v:-defaults}"
  npx tsx bench/scratch-consumer/run.ts $N 1 "$v" 2>/dev/null
done
