#!/usr/bin/env bash
# resolve_jars.sh DIR STAMP GROUP:ARTIFACT:VERSION...: copies the jars (without their
# dependencies) with mvn into DIR, only when the list differs from the one STAMP recorded at
# the last resolve. Used by the Spark set-up scripts.
set -euo pipefail
DIR=$1 STAMP=$2
shift 2
if [ -d "$DIR" ] && [ "$(printf '%s\n' "$@")" = "$(cat "$STAMP" 2>/dev/null)" ]; then
  exit 0
fi
echo "setup: resolving jars into $DIR: $*"
rm -rf "$DIR.tmp"
mkdir -p "$DIR.tmp"
OUT=$(cd "$DIR.tmp" && pwd)
copy_jar() {
  mvn -B -q -Dstyle.color=never "$@" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    -Dartifact="$jar" -DoutputDirectory="$OUT"
}
for jar in "$@"; do
  # Offline first: the local repository has them after the first resolve on this machine.
  copy_jar -o >/dev/null 2>&1 || copy_jar
done
rm -rf "$DIR"
mv "$DIR.tmp" "$DIR"
printf '%s\n' "$@" > "$STAMP"
