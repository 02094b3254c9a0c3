#!/bin/sh
# list_fuzz_targets.sh DIR — the libFuzzer targets built under DIR, one path a
# line, sorted. `make fuzz` runs exactly these. A target is an executable
# named fuzz_* that links libFuzzer, told by the name of libFuzzer's
# -max_total_time flag in its flag table: the corpus-replay programs
# (fuzz_*_corpus_replay, built in every configuration) share the fuzz_
# prefix but are plain programs that take corpus paths, not libFuzzer flags.
set -eu
dir=${1:?usage: list_fuzz_targets.sh BUILD_DIR}
find "$dir" -type f -name 'fuzz_*' -perm -u+x -not -path '*/CMakeFiles/*' \
     -not -path '*/corpus/*' -not -path '*/artifacts/*' | sort |
while IFS= read -r f; do
  if grep -q -a -F 'max_total_time' "$f"; then
    printf '%s\n' "$f"
  fi
done
