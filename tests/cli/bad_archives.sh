#!/bin/sh
# The catalogue of tests/cli/bad-archives.md: archives from someone else.
if ! command -v sqlite3 >/dev/null 2>&1; then
	echo "1..0 # SKIP the sqlite3 program is not installed (setup.sh installs it)"
	exit 0
fi
# application_id "WzPl" and schema version 2, as wzplan writes them.
head='PRAGMA application_id = 1467633772; PRAGMA user_version = 2;'
VIEW="$head CREATE VIEW runs AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)
 SELECT x AS id, 'size' AS command, '[]' AS args, '0' AS version, '' AS started, '' AS finished,
 'ok' AS status FROM r;"
SLOW="$head CREATE TABLE runs (id INTEGER PRIMARY KEY, command TEXT, args TEXT, version TEXT,
 started TEXT, finished TEXT, status TEXT); CREATE TABLE inputs (run, kind, name, origin, hash,
 size, content); CREATE TABLE figures (run, tbl, row_key, col, value, text);
 CREATE TABLE codec_measurements (run); CREATE TABLE sim_results (run);
 CREATE TABLE sim_series (run); CREATE TABLE fleets (run);
 INSERT INTO runs VALUES (1, 'size', '[]', '0', '', '', 'ok');
 INSERT INTO figures WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 300000)
 SELECT 1, 't', x, 'c', x, NULL FROM r;"
export VIEW SLOW
exec sh "$top_srcdir/tests/cli/bad_inputs.sh" "$top_srcdir/tests/cli/bad-archives.md" 7
