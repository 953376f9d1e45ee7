/* walbuf.c - the writer's WAL writes, gathered into one system call per commit
 * SPDX-License-Identifier: MIT
 *
 * DESIGN. SQLite writes a WAL frame as two writes, its 24-byte header and then the page, so
 * a group commit of 20 pages cost the writer 40 pwrite calls (each a full trip through the
 * page cache) before its fsync. The writer's connection opens its files through a VFS that
 * wraps the default one; for the WAL file only, writes that continue where the previous one
 * ended are gathered in a buffer (MEM_STORE__WALBUF_BYTES) and written together (in
 * pieces of 64 KiB: 16 frames a call), and the
 * buffer is written out before anything else touches the file: a write elsewhere or one
 * that does not fit, and every other call on it (read, sync, size, truncate, lock, file
 * control, close). It is used only with synchronous=FULL, where SQLite syncs the WAL at
 * every commit before it publishes the commit's frames in the WAL index, and only on a
 * file with powersafe overwrite (the default: no padding frames written after the sync,
 * which would be published from the buffer): so every frame
 * another connection (a reader, the checkpointer) can see was written and synced before,
 * exactly as without the buffer, and the writer's own reads of frames it wrote (a page
 * cache spill read back) see them too. A failed write of the buffer is reported by the
 * call that wrote it, with the code the direct write gives (SQLITE_FULL when the disk is
 * full), and the transaction fails as it would have. Other files (the database, a rollback
 * journal before WAL mode is on) are the default VFS's own, untouched.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <sqlite3.h>

#include "storage/store_int.h"

typedef struct walbuf_file {
    sqlite3_file base; /* our methods */
    sqlite3_file *real;
    unsigned char *buf; /* sqlite3_malloc'd at the first write; NULL: writes go through */
    size_t len;
    sqlite3_int64 off; /* the file offset of buf[0] */
    bool direct;       /* never gather (see wb_open) */
} walbuf_file;

#define WALBUF_REAL_AT ((sizeof(walbuf_file) + 15) & ~(size_t)15)

static sqlite3_vfs walbuf_vfs;
static sqlite3_vfs *walbuf_base;
static pthread_once_t walbuf_once = PTHREAD_ONCE_INIT;
static bool walbuf_ok;

/* The default VFS writes at most 128 KiB - 1 bytes in one call (it was made for pages; a
 * longer write is cut and reported as a full disk), so the buffer goes out in pieces. */
#define WALBUF_PIECE 65536u

static int wb_flush(walbuf_file *p)
{
    int rc = SQLITE_OK;
    for (size_t at = 0; at < p->len && rc == SQLITE_OK; at += WALBUF_PIECE) {
        size_t n = p->len - at < WALBUF_PIECE ? p->len - at : WALBUF_PIECE;
        rc = p->real->pMethods->xWrite(p->real, p->buf + at, (int)n, p->off + (sqlite3_int64)at);
    }
    p->len = 0; /* written or failed: the transaction fails with rc, the bytes are moot */
    return rc;
}

static int wb_write(sqlite3_file *f, const void *data, int amt, sqlite3_int64 off)
{
    walbuf_file *p = (walbuf_file *)f;
    size_t n = (size_t)amt;
    if (p->len && (off != p->off + (sqlite3_int64)p->len || p->len + n > MEM_STORE__WALBUF_BYTES)) {
        int rc = wb_flush(p);
        if (rc != SQLITE_OK) return rc;
    }
    if (p->direct) return p->real->pMethods->xWrite(p->real, data, amt, off);
    if (!p->buf && n < WALBUF_PIECE) p->buf = sqlite3_malloc(MEM_STORE__WALBUF_BYTES);
    if (!p->buf || n >= WALBUF_PIECE) /* no buffer (out of memory), or nothing to gain */
        return p->real->pMethods->xWrite(p->real, data, amt, off);
    if (!p->len) p->off = off;
    memcpy(p->buf + p->len, data, n);
    p->len += n;
    return SQLITE_OK;
}

static int wb_close(sqlite3_file *f)
{
    walbuf_file *p = (walbuf_file *)f;
    int rc = wb_flush(p);
    int rc2 = p->real->pMethods->xClose(p->real);
    sqlite3_free(p->buf);
    p->buf = NULL;
    return rc != SQLITE_OK ? rc : rc2;
}

/* Every other call: the buffer is written first, then the call goes to the real file. */
#define WB_FLUSH_OR_RETURN(f)                                                                      \
    walbuf_file *p = (walbuf_file *)(f);                                                           \
    do {                                                                                           \
        int frc = wb_flush(p);                                                                     \
        if (frc != SQLITE_OK) return frc;                                                          \
    } while (0)

static int wb_read(sqlite3_file *f, void *data, int amt, sqlite3_int64 off)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xRead(p->real, data, amt, off);
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xTruncate(p->real, size);
}

static int wb_sync(sqlite3_file *f, int flags)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xSync(p->real, flags);
}

static int wb_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xFileSize(p->real, size);
}

static int wb_lock(sqlite3_file *f, int level)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xLock(p->real, level);
}

static int wb_unlock(sqlite3_file *f, int level)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xUnlock(p->real, level);
}

static int wb_check_reserved(sqlite3_file *f, int *out)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int wb_file_control(sqlite3_file *f, int op, void *arg)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int wb_sector_size(sqlite3_file *f)
{
    walbuf_file *p = (walbuf_file *)f;
    return p->real->pMethods->xSectorSize(p->real);
}

static int wb_device_characteristics(sqlite3_file *f)
{
    walbuf_file *p = (walbuf_file *)f;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

/* Version 2 and 3 calls (shared memory, memory maps): SQLite makes them on the database
 * file, never on a WAL; forwarded all the same, after a flush. */
static int wb_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **out)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, out);
}

static int wb_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void wb_shm_barrier(sqlite3_file *f)
{
    walbuf_file *p = (walbuf_file *)f;
    p->real->pMethods->xShmBarrier(p->real);
}

static int wb_shm_unmap(sqlite3_file *f, int delete_flag)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **out)
{
    WB_FLUSH_OR_RETURN(f);
    return p->real->pMethods->xFetch(p->real, off, amt, out);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 off, void *mem)
{
    walbuf_file *p = (walbuf_file *)f;
    return p->real->pMethods->xUnfetch(p->real, off, mem);
}

/* The real file's methods decide which of these exist (its iVersion, copied at open). */
static sqlite3_io_methods wb_methods_v[4];

static const sqlite3_io_methods *wb_methods(const sqlite3_io_methods *real)
{
    int v = real->iVersion < 1 ? 1 : real->iVersion > 3 ? 3 : real->iVersion;
    return &wb_methods_v[v];
}

static void wb_methods_init(void)
{
    for (int v = 1; v <= 3; v++) {
        sqlite3_io_methods *m = &wb_methods_v[v];
        m->iVersion = v;
        m->xClose = wb_close;
        m->xRead = wb_read;
        m->xWrite = wb_write;
        m->xTruncate = wb_truncate;
        m->xSync = wb_sync;
        m->xFileSize = wb_file_size;
        m->xLock = wb_lock;
        m->xUnlock = wb_unlock;
        m->xCheckReservedLock = wb_check_reserved;
        m->xFileControl = wb_file_control;
        m->xSectorSize = wb_sector_size;
        m->xDeviceCharacteristics = wb_device_characteristics;
        if (v >= 2) {
            m->xShmMap = wb_shm_map;
            m->xShmLock = wb_shm_lock;
            m->xShmBarrier = wb_shm_barrier;
            m->xShmUnmap = wb_shm_unmap;
        }
        if (v >= 3) {
            m->xFetch = wb_fetch;
            m->xUnfetch = wb_unfetch;
        }
    }
}

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    (void)vfs;
    if (!(flags & SQLITE_OPEN_WAL)) /* not a WAL: the real file, in place */
        return walbuf_base->xOpen(walbuf_base, name, f, flags, out_flags);
    walbuf_file *p = (walbuf_file *)f;
    memset(p, 0, sizeof(*p));
    p->real = (sqlite3_file *)(void *)((char *)f + WALBUF_REAL_AT);
    int rc = walbuf_base->xOpen(walbuf_base, name, p->real, flags, out_flags);
    /* SQLite calls xClose on a file whose open failed only when pMethods is set */
    if (rc != SQLITE_OK || !p->real->pMethods) {
        p->base.pMethods = NULL;
        if (p->real->pMethods) p->real->pMethods->xClose(p->real);
        return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
    }
    p->base.pMethods = wb_methods(p->real->pMethods);
    /* Without powersafe overwrite SQLite pads a commit to the sector and writes the last
     * part of it after the sync: those writes must not wait in the buffer. */
    p->direct =
        !(p->real->pMethods->xDeviceCharacteristics(p->real) & SQLITE_IOCAP_POWERSAFE_OVERWRITE);
    return SQLITE_OK;
}

static void walbuf_register(void)
{
    walbuf_base = sqlite3_vfs_find(NULL);
    if (!walbuf_base) return;
    wb_methods_init();
    walbuf_vfs = *walbuf_base; /* every other call is the default VFS's, with its own data */
    walbuf_vfs.pNext = NULL;
    walbuf_vfs.zName = "mnemod-walbuf";
    walbuf_vfs.szOsFile = (int)WALBUF_REAL_AT + walbuf_base->szOsFile;
    walbuf_vfs.xOpen = wb_open;
    walbuf_ok = sqlite3_vfs_register(&walbuf_vfs, 0) == SQLITE_OK;
}

const char *mem_store__walbuf_vfs(void)
{
    pthread_once(&walbuf_once, walbuf_register);
    return walbuf_ok ? walbuf_vfs.zName : NULL;
}
