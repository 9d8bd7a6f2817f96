#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
// liblmdb from the system (Debian: liblmdb-dev). Everything CacheLog needs is in lmdb.h.
#include <lmdb.h>
#endif
