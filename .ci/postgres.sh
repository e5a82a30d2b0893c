# PostgreSQL for the tracking-server test (tests/test_server.py).  Sourced by .ci/run; also by hand:
#
#     . .ci/postgres.sh            # then: python -m pytest tests/test_server.py
#
# Installs Debian's `postgresql` package when no server binaries are present (root, or sudo), creates a
# private cluster owned by the `postgres` user (or by you when not root) in $HARNESS_PG_DIR, starts it on
# 127.0.0.1:$HARNESS_PG_PORT (a private port, so a distribution cluster on 5432 is left alone), creates the
# role `mlflow` (password `mlflow`, CREATEDB: the test makes a fresh database per run) and the database
# `mlflow`, and exports HARNESS_TEST_POSTGRES_URI.  A cluster already running there is reused.
# `harness_postgres_stop` stops the cluster if this script started it.

HARNESS_PG_PORT="${HARNESS_PG_PORT:-55432}"
HARNESS_PG_DIR="${HARNESS_PG_DIR:-/tmp/harness-postgres-${HARNESS_PG_PORT}}"
HARNESS_PG_STARTED=""

# Run a command as the cluster owner: `postgres` when we are root (initdb refuses root), else ourselves.
_harness_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

_harness_pg_bindir() {
    local initdb
    initdb="$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$initdb" ]; then dirname "$initdb"; fi
}

harness_postgres_start() {
    local sudo="" bindir
    if [ -z "$(_harness_pg_bindir)" ]; then
        [ "$(id -u)" = 0 ] || sudo="sudo"
        echo "postgres.sh: installing Debian's postgresql" >&2
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    fi
    bindir="$(_harness_pg_bindir)"
    if [ -z "$bindir" ]; then
        echo "postgres.sh: no PostgreSQL server binaries under /usr/lib/postgresql" >&2
        return 1
    fi

    if ! "$bindir/pg_isready" -q -h 127.0.0.1 -p "$HARNESS_PG_PORT"; then
        if [ ! -f "$HARNESS_PG_DIR/PG_VERSION" ]; then
            mkdir -p "$HARNESS_PG_DIR"
            [ "$(id -u)" = 0 ] && chown postgres:postgres "$HARNESS_PG_DIR"
            # trust on the cluster's own unix socket (in the data folder, mode 0700); passwords over TCP
            _harness_pg_as_owner "$bindir/initdb" -D "$HARNESS_PG_DIR" -U postgres -E UTF8 --locale=C.UTF-8 \
                --auth-local=trust --auth-host=scram-sha-256 >/dev/null
        fi
        _harness_pg_as_owner "$bindir/pg_ctl" -D "$HARNESS_PG_DIR" -l "$HARNESS_PG_DIR/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $HARNESS_PG_PORT -k $HARNESS_PG_DIR -c max_connections=200" \
            start >/dev/null
        HARNESS_PG_STARTED=1
    fi

    local psql=("$bindir/psql" -q -v ON_ERROR_STOP=1 -h "$HARNESS_PG_DIR" -p "$HARNESS_PG_PORT" -U postgres)
    if [ -z "$(_harness_pg_as_owner "${psql[@]}" -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'mlflow'")" ]; then
        _harness_pg_as_owner "${psql[@]}" -c "CREATE ROLE mlflow LOGIN CREATEDB PASSWORD 'mlflow'"
    fi
    if [ -z "$(_harness_pg_as_owner "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'mlflow'")" ]; then
        _harness_pg_as_owner "${psql[@]}" -c "CREATE DATABASE mlflow OWNER mlflow"
    fi
    export HARNESS_TEST_POSTGRES_URI="postgresql://mlflow:mlflow@127.0.0.1:${HARNESS_PG_PORT}/mlflow"
    echo "postgres.sh: PostgreSQL ready, HARNESS_TEST_POSTGRES_URI=$HARNESS_TEST_POSTGRES_URI" >&2
}

harness_postgres_stop() {
    if [ -n "$HARNESS_PG_STARTED" ]; then
        _harness_pg_as_owner "$(_harness_pg_bindir)/pg_ctl" -D "$HARNESS_PG_DIR" -m fast -w stop >/dev/null || true
        HARNESS_PG_STARTED=""
    fi
}

harness_postgres_start
