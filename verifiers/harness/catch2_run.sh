# quotabench's Catch2 run (sourced by bash from the task's workspace, the compile command as its
# arguments): the command's own g++ line builds the test binary, linked with Catch2's main
# (the system's, built once by the grader: .quotabench/catch2-main.o); the binary writes Catch2's
# XML report to a file of its own, which follows the run after a line
# `@@quotabench-report@@ catch2.xml` (verifiers/catch2.py reads it).
out="${TMPDIR:-/tmp}/qb-catch2"
rm -rf "$out" && mkdir -p "$out" || exit 125
main=.quotabench/catch2-main.o
[ -f "$main" ] || { echo "quotabench: Catch2's main object is missing ($main)"; exit 125; }
"$@" "$main" -o "$out/tests" || exit $?
"$out/tests" --reporter xml --out "$out/report.xml" --order decl --use-colour no
status=$?
if [ -f "$out/report.xml" ]; then
    printf '\n@@quotabench-report@@ catch2.xml\n'
    cat "$out/report.xml"
fi
exit $status
