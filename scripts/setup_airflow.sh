#!/usr/bin/env bash
# Installs the Airflow 3 peer of tests/bifrost/test_airflow_events.py into its own venv,
# .deps/airflow/venv (Airflow's pins would clash with the project's .venv), from the frozen
# scripts/airflow-requirements.txt, only when that list changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."

REQS=scripts/airflow-requirements.txt
VENV=.deps/airflow/venv
STAMP=$VENV/.skade-requirements
# A venv moved from where it was built keeps scripts whose #! names the old place: rebuilt.
interpreter=$(head -n 1 "$VENV/bin/airflow" 2>/dev/null | sed -n 's/^#!//p' || true)  # none yet: a fresh machine
if [ -x "$VENV/bin/airflow" ] && [ -n "$interpreter" ] && [ -x "$interpreter" ] &&
   cmp -s "$REQS" "$STAMP" 2>/dev/null; then
  exit 0
fi
echo "setup: installing Airflow into $VENV (a few minutes)"
# A venv is not relocatable: built in place; the stamp, written last, marks it complete.
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$REQS"
cp "$REQS" "$STAMP"
