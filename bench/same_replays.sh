#!/bin/bash
# Does a change leave `replay --json` byte for byte as it was? Replays every sample and real transcript in
# the repository with two source trees (e.g. a worktree of the last commit and this one) and compares.
#
#   bash bench/same_replays.sh OLD_TREE NEW_TREE [replay options...]
#
# Each tree is put on PYTHONPATH in turn (run from outside both, with the project's venv active); prints
# each file whose output or exit code differs, then the counts. Exit 1 when any differs.
set -u
old=$1 new=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
same=0 differ=0 refused=0
while IFS= read -r file; do
  for side in old new; do
    tree=$old; [ "$side" = new ] && tree=$new
    PYTHONPATH=$tree python -m playground.cli replay --json "$@" "$file" >"$work/$side.out" 2>/dev/null
    echo $? >"$work/$side.rc"
  done
  if ! cmp -s "$work/old.rc" "$work/new.rc" || ! cmp -s "$work/old.out" "$work/new.out"; then
    echo "DIFFERS $file"
    differ=$((differ + 1))
  elif [ "$(cat "$work/new.rc")" != 0 ]; then
    refused=$((refused + 1))
  else
    same=$((same + 1))
  fi
done < <(find "$here/sample_sessions" "$here/tests/data/real-sessions" -type f \( -name '*.jsonl' -o -name '*.json' \) | sort)
echo "$same the same, $differ differ, $refused not read by replay (the same exit code in both)"
[ "$differ" = 0 ]
