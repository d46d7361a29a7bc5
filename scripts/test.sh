#!/usr/bin/env bash
# Run georeview's tests from nothing: system tools, a virtualenv, the package, pytest.
#   bash scripts/test.sh            # all tests
#   bash scripts/test.sh -k jurisdiction
# As root on Debian it installs gdal-bin (gdaldem, the slope reference) and chromium
# (browser tests) and postgresql (the case store's PostgreSQL tests, scripts/postgres.sh)
# from apt; elsewhere install them yourself or those tests are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v gdaldem >/dev/null 2>&1 || need_apt+=(gdal-bin)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v pg_ctlcluster >/dev/null 2>&1 || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing from apt: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "warning: ${need_apt[*]} not installed; the tests that need them will be skipped" >&2
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test,dask,web,postgres]"
# the case store's PostgreSQL tests: Debian's server, started here (as root); without it
# they skip, except in CI, where they fail
if [ -z "${GEOREVIEW_TEST_POSTGRES:-}" ] && [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null 2>&1; then
  GEOREVIEW_TEST_POSTGRES=$(bash scripts/postgres.sh)
  export GEOREVIEW_TEST_POSTGRES
fi
exec .venv/bin/python -m pytest -q "$@"
