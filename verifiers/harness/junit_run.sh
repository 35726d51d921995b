# quotabench's JUnit run (sourced by bash from the task's workspace): Gradle's layout compiled
# by javac, the tests run by JUnit 5's console launcher, JUnit and AssertJ from the system's
# jars, nothing downloaded. The jars come first on every class path: a class the model writes
# under org/junit or org/assertj never stands in for theirs. No annotation processor runs,
# and no service registration (a launcher listener, an extension) or junit-platform.properties
# of the workspace reaches the launcher. The XML reports follow the run, each after a line
# `@@quotabench-report@@ NAME` (verifiers/junit.py reads them).
out="${TMPDIR:-/tmp}/qb-junit"
jars="${QB_JUNIT_JARS:-/usr/share/java}"
libs="$jars/junit-platform-console-standalone.jar:$jars/assertj-core.jar"
[ -f "$jars/junit4.jar" ] && libs="$libs:$jars/junit4.jar:$jars/hamcrest-core.jar"
rm -rf "$out" && mkdir -p "$out/main" "$out/test" "$out/reports" || exit 125
sources() { [ -d "$1" ] && find "$1" -name '*.java' -type f | sed 's/["\\]/\\&/g; s/.*/"&"/' > "$2"; [ -s "$2" ]; }
resources() {  # a source set's resources beside its classes, without what configures the runner
    [ -d "$1" ] || return 0
    (cd "$1" && find . -type f ! -path './META-INF/services/*' ! -name 'junit-platform.properties' -print0 |
        xargs -0 -r cp --parents -t "$2") || return 1
}
javac_() { javac -J-XX:+UseSerialGC -J-XX:TieredStopAtLevel=1 -encoding UTF-8 -nowarn -proc:none -implicit:class "$@"; }
if sources src/main/java "$out/main.list"; then
    javac_ -d "$out/main" -cp "$libs" "@$out/main.list" || exit $?
fi
resources src/main/resources "$out/main" || exit 1
sources src/test/java "$out/test.list" || { echo "no test sources under src/test/java"; exit 1; }
javac_ -d "$out/test" -cp "$libs:$out/main" "@$out/test.list" || exit $?
resources src/test/resources "$out/test" || exit 1
java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss8m -cp "$libs:$out/test:$out/main" \
    org.junit.platform.console.ConsoleLauncher --disable-banner --disable-ansi-colors \
    --details=tree --details-theme=ascii --fail-if-no-tests --reports-dir="$out/reports" \
    --config=junit.jupiter.extensions.autodetection.enabled=false \
    --config='junit.platform.execution.listeners.deactivate=*' \
    --scan-classpath "$out/test" "$@"
status=$?
for report in "$out"/reports/TEST-*.xml; do
    [ -f "$report" ] || continue
    printf '\n@@quotabench-report@@ %s\n' "${report##*/}"
    cat "$report"
done
exit $status
