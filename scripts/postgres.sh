#!/usr/bin/env bash
# Start Debian's PostgreSQL for the tests and print the database URL they use.
#   url=$(bash scripts/postgres.sh)  ->  postgresql://georeview:georeview@127.0.0.1:5432/georeview
# Needs root and the postgresql package (scripts/test.sh installs it). The role may create
# databases: the tests make one per run and drop it after.
set -euo pipefail
ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q "^$ver main"; then
  pg_createcluster "$ver" main >/dev/null
fi
pg_ctlcluster "$ver" main start >/dev/null 2>&1 || true
for _ in $(seq 1 30); do
  runuser -u postgres -- pg_isready -q && break
  sleep 1
done
runuser -u postgres -- psql -q -tAc "SELECT 1 FROM pg_roles WHERE rolname='georeview'" | grep -q 1 \
  || runuser -u postgres -- psql -q -c "CREATE ROLE georeview LOGIN PASSWORD 'georeview' CREATEDB" >/dev/null
runuser -u postgres -- psql -q -tAc "SELECT 1 FROM pg_database WHERE datname='georeview'" | grep -q 1 \
  || runuser -u postgres -- createdb -O georeview georeview
echo "postgresql://georeview:georeview@127.0.0.1:5432/georeview"
