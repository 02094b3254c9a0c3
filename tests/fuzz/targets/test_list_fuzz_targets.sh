#!/bin/sh
# test_list_fuzz_targets.sh LIST_SCRIPT REPLAY_PROGRAM — list_fuzz_targets.sh
# must name a libFuzzer target and leave out a corpus-replay program even
# though both are executables called fuzz_* (make fuzz ran the replay
# programs with -max_total_time and reported them FAILED).
set -eu
list=$1
replay=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/CMakeFiles"
# a real corpus-replay program, under the name make fuzz saw
cp "$replay" "$tmp/bin/fuzz_batch_body_corpus_replay"
# a stand-in libFuzzer binary: executable and carrying libFuzzer's flag table
printf '#!/bin/sh\n# -max_total_time=N\n' > "$tmp/bin/fuzz_fake_target"
chmod +x "$tmp/bin/fuzz_fake_target"
# not executable, and object files under CMakeFiles: never targets
printf 'max_total_time' > "$tmp/bin/fuzz_not_executable"
cp "$tmp/bin/fuzz_fake_target" "$tmp/CMakeFiles/fuzz_in_cmakefiles"
got=$(sh "$list" "$tmp")
want="$tmp/bin/fuzz_fake_target"
if [ "$got" != "$want" ]; then
  echo "list_fuzz_targets.sh listed:"
  echo "$got"
  echo "expected only: $want"
  exit 1
fi
echo "ok: only the libFuzzer target is listed"
