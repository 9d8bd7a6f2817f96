#!/usr/bin/python3
"""Overwrites the state row of KEY in the CacheLog database DB with bytes no row can hold, as a
broken disk or another program might: the damage the README's repair session starts from. The
log itself is left alone, so `cachelog rebuild` can repair it. Run it only while no process has
the database open. It reads and writes with Python's lmdb module, an LMDB client independent of
CacheLog: Debian's python3-lmdb, which Tools/setup installs for the system's /usr/bin/python3.

    Documentation/examples/damage-state-row.py DB KEY
"""
import sys

import lmdb

if len(sys.argv) != 3:
    sys.exit("usage: damage-state-row.py DB KEY")
database, key = sys.argv[1], sys.argv[2]
env = lmdb.open(database, max_dbs=8, subdir=True, create=False)
state = env.open_db(b"state", create=False)
with env.begin(write=True) as txn:
    if txn.get(key.encode(), db=state) is None:
        sys.exit(f"damage-state-row: no state row for {key!r} in {database}")
    txn.put(key.encode(), b"not a state row", db=state)
env.close()
