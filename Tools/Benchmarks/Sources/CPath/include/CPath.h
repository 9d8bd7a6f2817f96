#ifndef CPATH_H
#define CPATH_H
// The limit: the work CacheLog does, written by hand in C against liblmdb and zlib, in CacheLog's
// own on-disk format (Sources/CacheLog/CacheLog.docc/Format.md), so that CacheLog can open what
// this writes. No Swift, no queue, no allocation per operation beyond what zlib does itself.
#include <stddef.h>
#include <stdint.h>

typedef struct cpath cpath;

/// Opens (creating) a database in `dir` with the tables events/state/checkpoints/meta, and with
/// `index` = 1 the key index too (the keys table, written with each record, as CacheLog does).
/// `nosync` = 1 opens with MDB_NOSYNC (flush with cpath_sync); 0 syncs every commit (LMDB default).
cpath *cpath_open(const char *dir, int nosync, size_t mapsize, int index);
void cpath_close(cpath *db);
int cpath_sync(cpath *db);

/// A save: in one write transaction, a `delete(replaced)` record and a `put` record (payload
/// compressed at level 1 with a kept deflate stream, framed, CRC-32), both with MDB_APPEND, the
/// state row and the lastSeq/lastRecordedAt counters; then commit (synced unless nosync; synced
/// commits keep zeros written ahead of the pages in use, as CacheLog's do).
int cpath_save(cpath *db, const char *key, size_t key_len, const void *payload, size_t payload_len,
               double timestamp, double recorded_at);
/// One `put` in its own write transaction (bulk append: one commit per event).
int cpath_put(cpath *db, const char *key, size_t key_len, const void *payload, size_t payload_len,
              double timestamp, double recorded_at);
/// `count` puts in one write transaction (to generate large logs).
int cpath_put_many(cpath *db, const char *const *keys, const size_t *key_lens, const void *const *payloads,
                   const size_t *payload_lens, size_t count, double timestamp, double recorded_at);

/// Retrieve: read transaction, state row -> seq, mdb_get of the record, framing + CRC-32 check,
/// inflate into `out` (capacity `out_cap`). Returns the payload length, or -1.
long cpath_retrieve(cpath *db, const char *key, size_t key_len, void *out, size_t out_cap, double *timestamp);

/// Scans the whole events table with a cursor, checks every record's framing and (with `verify`)
/// CRC-32, and folds the headers into a key -> live seq hash table (no inflate). Returns the
/// events folded, and the live keys in `live_keys`.
long cpath_fold(cpath *db, int verify, long *live_keys);

/// libdeflate's zlib stream of `len` bytes at `level` into a scratch buffer; returns the compressed size, or -1.
long cpath_compressed_size(const void *payload, size_t len, int level);
/* libdeflate at `level` (a zlib stream), then inflated, each `rounds` times: the seconds of one of each, and
   the compressed size (-1 on failure). */
long cpath_zlib_round_trips(const void *payload, size_t len, int level, int rounds, double *compress_seconds, double *inflate_seconds);

/// LMDB's compacting copy (what `mdb_copy -c` does) of the environment in `source_dir` into the
/// existing, empty `target_dir`: only the pages in use, renumbered. Returns 0 on success.
int cpath_copy_compact(const char *source_dir, const char *target_dir);

/// Seq of the last event.
uint64_t cpath_last_seq(cpath *db);

/// LMDB alone on a CacheLog database in `dir`: open read-only, get `key` from the state table,
/// close. 0 when found, else LMDB's code.
int cpath_open_and_get(const char *dir, const char *key, size_t key_len);

#endif
