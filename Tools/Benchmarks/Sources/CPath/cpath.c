#include "CPath.h"

#include <lmdb.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <libdeflate.h>

struct cpath {
    MDB_env *env;
    MDB_dbi events, state, checkpoints, meta, keys;
    int indexed; // maintain the key index (format 2), as CacheLog does
    int synced; // commits are flushed: keep zeros written ahead of the pages in use, as CacheLog does
    unsigned char *record; // scratch: one framed record
    size_t record_cap;
    unsigned char *body; // scratch: one compressed body
    size_t body_cap;
    struct libdeflate_compressor *compressor; // kept, as CacheLog keeps its compressors
    struct libdeflate_decompressor *decompressor;
};

enum { HEADER = 38, CRC = 4, STATE_ROW = 28 };
/// The engine's default level (libdeflate, zlib streams).
enum { CPATH_LEVEL = 1 };

static void put_u16(unsigned char *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = v >> (24 - 8 * i); }
static void put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = v >> (56 - 8 * i); }
static void put_f64(unsigned char *p, double d) { uint64_t v; memcpy(&v, &d, 8); put_u64(p, v); }
static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get_u32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 0; i < 8; i++) v = v << 8 | p[i]; return v; }

static int reserve(unsigned char **buffer, size_t *cap, size_t need) {
    if (*cap >= need) return 0;
    unsigned char *grown = realloc(*buffer, need);
    if (!grown) return -1;
    *buffer = grown;
    *cap = need;
    return 0;
}

cpath *cpath_open(const char *dir, int nosync, size_t mapsize, int index) {
    cpath *db = calloc(1, sizeof *db);
    if (!db) return NULL;
    if (mdb_env_create(&db->env)) goto fail;
    mdb_env_set_maxdbs(db->env, 8);
    mdb_env_set_mapsize(db->env, mapsize);
    if (mdb_env_open(db->env, dir, MDB_NOTLS | (nosync ? MDB_NOSYNC : 0), 0644)) goto fail_env;
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, 0, &txn)) goto fail_env;
    if (mdb_dbi_open(txn, "meta", MDB_CREATE, &db->meta) || mdb_dbi_open(txn, "events", MDB_CREATE, &db->events) ||
        mdb_dbi_open(txn, "state", MDB_CREATE, &db->state) ||
        mdb_dbi_open(txn, "checkpoints", MDB_CREATE, &db->checkpoints)) {
        mdb_txn_abort(txn);
        goto fail_env;
    }
    db->indexed = index;
    db->synced = !nosync;
    if (index && mdb_dbi_open(txn, "keys", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &db->keys)) {
        mdb_txn_abort(txn);
        goto fail_env;
    }
    // Stamp a new database only: a CacheLog database opened here (the fold probe) keeps its format.
    MDB_val k = {5, "magic"}, v;
    if (mdb_get(txn, db->meta, &k, &v) == MDB_NOTFOUND) {
        unsigned char format[4];
        put_u32(format, index ? 2 : 1);
        v = (MDB_val){8, "cachelog"};
        mdb_put(txn, db->meta, &k, &v, 0);
        k = (MDB_val){6, "format"};
        v = (MDB_val){4, format};
        mdb_put(txn, db->meta, &k, &v, 0);
    }
    if (mdb_txn_commit(txn)) goto fail_env;
    return db;
fail_env:
    mdb_env_close(db->env);
fail:
    free(db);
    return NULL;
}

void cpath_close(cpath *db) {
    if (!db) return;
    mdb_env_close(db->env);
    libdeflate_free_compressor(db->compressor);
    libdeflate_free_decompressor(db->decompressor);
    free(db->record);
    free(db->body);
    free(db);
}

int cpath_sync(cpath *db) { return mdb_env_sync(db->env, 1); }

static uint64_t meta_u64(MDB_txn *txn, MDB_dbi meta, const char *name) {
    MDB_val k = {strlen(name), (void *)name}, v;
    if (mdb_get(txn, meta, &k, &v) || v.mv_size != 8) return 0;
    return get_u64(v.mv_data);
}

static int set_meta_u64(MDB_txn *txn, MDB_dbi meta, const char *name, uint64_t value) {
    unsigned char bytes[8];
    put_u64(bytes, value);
    MDB_val k = {strlen(name), (void *)name}, v = {8, bytes};
    return mdb_put(txn, meta, &k, &v, 0);
}

/// Frames one record into db->record and appends it under `seq`.
static int append_record(cpath *db, MDB_txn *txn, uint64_t seq, unsigned char kind, unsigned char flags,
                         unsigned char reason, double recorded_at, double timestamp, const char *key, size_t key_len,
                         uint32_t payload_len, const unsigned char *body, size_t body_len) {
    size_t total = HEADER + key_len + body_len + CRC;
    if (reserve(&db->record, &db->record_cap, total)) return -1;
    unsigned char *r = db->record;
    r[0] = 1; r[1] = kind; r[2] = flags; r[3] = reason;
    put_f64(r + 4, recorded_at);
    put_f64(r + 12, timestamp);
    put_f64(r + 20, 0);
    put_u16(r + 28, (uint16_t)key_len);
    put_u32(r + 30, payload_len);
    put_u32(r + 34, (uint32_t)body_len);
    memcpy(r + HEADER, key, key_len);
    if (body_len) memcpy(r + HEADER + key_len, body, body_len);
    put_u32(r + total - CRC, (uint32_t)crc32(0, r, (uInt)(total - CRC)));
    unsigned char seq_key[8];
    put_u64(seq_key, seq);
    MDB_val k = {8, seq_key}, v = {total, r};
    int rc = mdb_put(txn, db->events, &k, &v, MDB_APPEND);
    if (rc || !db->indexed) return rc;
    MDB_val name = {key_len, (void *)key}, entry = {8, seq_key};
    return mdb_put(txn, db->keys, &name, &entry, MDB_APPENDDUP);
}

static int put_in(cpath *db, MDB_txn *txn, uint64_t seq, const char *key, size_t key_len, const void *payload,
                  size_t payload_len, double timestamp, double recorded_at) {
    if (!db->compressor && !(db->compressor = libdeflate_alloc_compressor(CPATH_LEVEL))) return -1;
    size_t body_len = libdeflate_zlib_compress_bound(db->compressor, payload_len);
    if (reserve(&db->body, &db->body_cap, body_len)) return -1;
    body_len = libdeflate_zlib_compress(db->compressor, payload, payload_len, db->body, body_len);
    if (!body_len) return -1;
    int rc = append_record(db, txn, seq, 1, 1, 0, recorded_at, timestamp, key, key_len, (uint32_t)payload_len,
                           db->body, body_len);
    if (rc) return rc;
    unsigned char row[STATE_ROW];
    put_u64(row, seq);
    put_f64(row + 8, timestamp);
    put_u32(row + 16, (uint32_t)payload_len);
    put_u64(row + 20, seq);
    MDB_val k = {key_len, (void *)key}, v = {STATE_ROW, row};
    return mdb_put(txn, db->state, &k, &v, 0);
}

/// The data file extended with zeros past the pages in use, a sixteenth of them at a time (256 KB
/// to 8 MB), as CacheLog's DataFileHeadroom does: a commit then overwrites written blocks, and
/// its fdatasync does not commit the file system's journal (its commits are all small ones, which
/// are the ones CacheLog writes ahead of). Call inside a write transaction.
static void keep_headroom(cpath *db) {
    static const unsigned char zeros[64 << 10];
    MDB_envinfo info;
    MDB_stat stat_;
    int fd;
    struct stat file;
    if (mdb_env_info(db->env, &info) || mdb_env_stat(db->env, &stat_) || mdb_env_get_fd(db->env, &fd) || fstat(fd, &file)) return;
    long used = (long)(info.me_last_pgno + 1) * stat_.ms_psize, size = (long)file.st_size;
    long step = used / 16 < (256 << 10) ? (256 << 10) : used / 16 > (8 << 20) ? (8 << 20) : used / 16;
    if (size < used || size - used >= step / 2) return;
    for (long offset = size; offset < used + step;) {
        long chunk = used + step - offset < (long)sizeof zeros ? used + step - offset : (long)sizeof zeros;
        ssize_t written = pwrite(fd, zeros, (size_t)chunk, offset);
        if (written <= 0) return;
        offset += written;
    }
}

static int finish(cpath *db, MDB_txn *txn, uint64_t seq, double recorded_at) {
    uint64_t bits;
    memcpy(&bits, &recorded_at, 8);
    if (set_meta_u64(txn, db->meta, "lastSeq", seq) || set_meta_u64(txn, db->meta, "lastRecordedAt", bits)) {
        mdb_txn_abort(txn);
        return -1;
    }
    if (db->synced) keep_headroom(db);
    return mdb_txn_commit(txn);
}

int cpath_save(cpath *db, const char *key, size_t key_len, const void *payload, size_t payload_len,
               double timestamp, double recorded_at) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, 0, &txn)) return -1;
    uint64_t seq = meta_u64(txn, db->meta, "lastSeq");
    MDB_val k = {key_len, (void *)key};
    int rc = append_record(db, txn, ++seq, 2, 0, 1, recorded_at, 0, key, key_len, 0, NULL, 0);
    if (!rc) {
        rc = mdb_del(txn, db->state, &k, NULL);
        if (rc == MDB_NOTFOUND) rc = 0;
    }
    if (!rc) rc = put_in(db, txn, ++seq, key, key_len, payload, payload_len, timestamp, recorded_at);
    if (rc) {
        mdb_txn_abort(txn);
        return rc;
    }
    return finish(db, txn, seq, recorded_at);
}

int cpath_put(cpath *db, const char *key, size_t key_len, const void *payload, size_t payload_len,
              double timestamp, double recorded_at) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, 0, &txn)) return -1;
    uint64_t seq = meta_u64(txn, db->meta, "lastSeq") + 1;
    int rc = put_in(db, txn, seq, key, key_len, payload, payload_len, timestamp, recorded_at);
    if (rc) {
        mdb_txn_abort(txn);
        return rc;
    }
    return finish(db, txn, seq, recorded_at);
}

int cpath_put_many(cpath *db, const char *const *keys, const size_t *key_lens, const void *const *payloads,
                   const size_t *payload_lens, size_t count, double timestamp, double recorded_at) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, 0, &txn)) return -1;
    uint64_t seq = meta_u64(txn, db->meta, "lastSeq");
    for (size_t i = 0; i < count; i++) {
        int rc = put_in(db, txn, ++seq, keys[i], key_lens[i], payloads[i], payload_lens[i], timestamp, recorded_at);
        if (rc) {
            mdb_txn_abort(txn);
            return rc;
        }
    }
    return finish(db, txn, seq, recorded_at);
}

long cpath_retrieve(cpath *db, const char *key, size_t key_len, void *out, size_t out_cap, double *timestamp) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) return -1;
    long result = -1;
    MDB_val k = {key_len, (void *)key}, v;
    if (mdb_get(txn, db->state, &k, &v) || v.mv_size != STATE_ROW) goto done;
    unsigned char seq_key[8];
    memcpy(seq_key, (unsigned char *)v.mv_data + 20, 8); // the seq holding the payload bytes
    k = (MDB_val){8, seq_key};
    if (mdb_get(txn, db->events, &k, &v) || v.mv_size < HEADER + CRC) goto done;
    const unsigned char *r = v.mv_data;
    size_t klen = get_u16(r + 28), plen = get_u32(r + 30), blen = get_u32(r + 34);
    if (HEADER + klen + blen + CRC != v.mv_size || plen > out_cap) goto done;
    if (crc32(0, r, (uInt)(v.mv_size - CRC)) != get_u32(r + v.mv_size - CRC)) goto done;
    uint64_t bits = get_u64(r + 12);
    memcpy(timestamp, &bits, 8);
    if (!db->decompressor && !(db->decompressor = libdeflate_alloc_decompressor())) goto done;
    size_t consumed = 0, length = 0;
    if (libdeflate_zlib_decompress_ex(db->decompressor, r + HEADER + klen, blen, out, plen, &consumed, &length) != LIBDEFLATE_SUCCESS
        || length != plen || consumed != blen) goto done;
    result = (long)length;
done:
    mdb_txn_abort(txn);
    return result;
}

// A small open-addressing table: key bytes (pointing into the map, valid during the scan) -> seq.
typedef struct { const unsigned char *key; size_t len; uint64_t seq; uint64_t timestamp; int live; } slot;

static uint64_t hash(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

long cpath_fold(cpath *db, int verify, long *live_keys) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) return -1;
    MDB_cursor *cursor;
    if (mdb_cursor_open(txn, db->events, &cursor)) {
        mdb_txn_abort(txn);
        return -1;
    }
    size_t cap = 1 << 16, used = 0;
    slot *table = calloc(cap, sizeof *table);
    long folded = 0;
    MDB_val k, v;
    int op = MDB_FIRST;
    while (table && mdb_cursor_get(cursor, &k, &v, op) == 0) {
        op = MDB_NEXT;
        const unsigned char *r = v.mv_data;
        if (v.mv_size < HEADER + CRC) continue;
        size_t klen = get_u16(r + 28), blen = get_u32(r + 34);
        if (HEADER + klen + blen + CRC != v.mv_size) continue;
        if (verify && crc32(0, r, (uInt)(v.mv_size - CRC)) != get_u32(r + v.mv_size - CRC)) continue;
        folded++;
        const unsigned char *key = r + HEADER;
        size_t i = hash(key, klen) & (cap - 1);
        while (table[i].key && !(table[i].len == klen && memcmp(table[i].key, key, klen) == 0)) i = (i + 1) & (cap - 1);
        if (!table[i].key) {
            if (++used * 2 > cap) break; // a benchmark log has far fewer keys
            table[i].key = key;
            table[i].len = klen;
        }
        switch (r[1]) {
        case 1: // put
            table[i].live = 1;
            table[i].seq = get_u64(k.mv_data);
            table[i].timestamp = get_u64(r + 12);
            break;
        case 2: table[i].live = 0; break; // delete
        case 3: // expire: only the version cached at its timestamp
            if (table[i].live && table[i].timestamp == get_u64(r + 12)) table[i].live = 0;
            break;
        }
    }
    long live = 0;
    for (size_t i = 0; table && i < cap; i++) live += table[i].live;
    *live_keys = live;
    free(table);
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return folded;
}

uint64_t cpath_last_seq(cpath *db) {
    MDB_txn *txn;
    if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn)) return 0;
    uint64_t seq = meta_u64(txn, db->meta, "lastSeq");
    mdb_txn_abort(txn);
    return seq;
}

long cpath_compressed_size(const void *payload, size_t len, int level) {
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    if (!c) return -1;
    size_t bound = libdeflate_zlib_compress_bound(c, len);
    unsigned char *out = malloc(bound);
    size_t out_len = out ? libdeflate_zlib_compress(c, payload, len, out, bound) : 0;
    free(out);
    libdeflate_free_compressor(c);
    return out_len > 0 ? (long)out_len : -1;
}

long cpath_zlib_round_trips(const void *payload, size_t len, int level, int rounds, double *compress_seconds, double *inflate_seconds) {
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t bound = c ? libdeflate_zlib_compress_bound(c, len) : 0;
    unsigned char *packed = malloc(bound ? bound : 1), *unpacked = malloc(len ? len : 1);
    if (!c || !d || !packed || !unpacked) {
        free(packed); free(unpacked); libdeflate_free_compressor(c); libdeflate_free_decompressor(d);
        return -1;
    }
    size_t packed_len = 0;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < rounds; i++) {
        if (!(packed_len = libdeflate_zlib_compress(c, payload, len, packed, bound))) break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (int i = 0; i < rounds && packed_len > 0; i++) {
        size_t out_len = 0;
        if (libdeflate_zlib_decompress(d, packed, packed_len, unpacked, len, &out_len) != LIBDEFLATE_SUCCESS || out_len != len) { packed_len = 0; break; }
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    *compress_seconds = ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) / rounds;
    *inflate_seconds = ((t2.tv_sec - t1.tv_sec) + (t2.tv_nsec - t1.tv_nsec) * 1e-9) / rounds;
    free(packed);
    free(unpacked);
    libdeflate_free_compressor(c);
    libdeflate_free_decompressor(d);
    return packed_len > 0 ? (long)packed_len : -1;
}

int cpath_copy_compact(const char *source_dir, const char *target_dir) {
    MDB_env *env;
    if (mdb_env_create(&env)) return -1;
    mdb_env_set_maxdbs(env, 8);
    int rc = mdb_env_open(env, source_dir, MDB_RDONLY | MDB_NOTLS, 0644);
    if (!rc) rc = mdb_env_copy2(env, target_dir, MDB_CP_COMPACT);
    mdb_env_close(env);
    return rc;
}

/* LMDB alone on a CacheLog database: open it read-only, look `key` up in its state table, close.
 * The floor under CacheLog's open + retrieve, which adds its opening checks (the page check
 * among them), the record's decoding and its inflating. */
int cpath_open_and_get(const char *dir, const char *key, size_t key_len) {
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    MDB_dbi dbi;
    int rc = mdb_env_create(&env);
    if (rc) return rc;
    mdb_env_set_maxdbs(env, 8);
    rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0600);
    if (!rc) rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (!rc) rc = mdb_dbi_open(txn, "state", 0, &dbi);
    if (!rc) {
        MDB_val k = {key_len, (void *)key}, v;
        rc = mdb_get(txn, dbi, &k, &v);
    }
    if (txn) mdb_txn_abort(txn);
    mdb_env_close(env);
    return rc;
}
