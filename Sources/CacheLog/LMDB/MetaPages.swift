internal import CLMDB
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// LMDB's two meta pages at the head of a data file, read with `pread`: which commit is the
/// newest, and how far its pages reach. A reader without the lock file reads them to copy one
/// commit whole (``PrivateCopy``).
///
/// Commit T writes its meta into page T % 2, after its other pages, so one page holds the newest
/// commit and the other the one before. The layout is liblmdb's (mdb.c: `MDB_page`, then
/// `MDB_meta`), which lmdb.h does not export; an environment opened on a copy checks it against
/// LMDB's own reading of that copy (`mdb_env_info`), so a liblmdb laid out otherwise is refused,
/// never misread.
struct MetaPages {
    /// One meta page's record of a commit.
    struct Meta: Equatable {
        var commit: Int
        var lastPage: Int
        /// The meta's bytes from `mm_mapsize` on: all that a commit rewrites (mdb.c,
        /// `mdb_env_write_meta`), so a meta page copied while a commit wrote it differs here.
        var written: [UInt8]

        /// The free list's or the table catalog's tree, as this commit records it.
        func tree(_ tree: Tree) -> TreeRecord {
            TreeRecord(written, at: MetaPages.w + (tree == .free ? 0 : TreeRecord.size))
        }
    }

    /// The two trees a meta page records (`FREE_DBI`, `MAIN_DBI`).
    enum Tree { case free, main }

    let pageSize: Int
    let metas: [Meta]

    /// The page holding the newest commit (LMDB's `mdb_env_pick_meta`).
    var newest: Int { metas[0].commit < metas[1].commit ? 1 : 0 }

    /// Where slot `index`'s rewritten bytes start in the file.
    func writtenOffset(_ index: Int) -> Int { index * pageSize + Self.header + Self.mapSizeField }

    // The layout, in words of pointer size `w` (`pgno_t`, `txnid_t` and `size_t` are words).
    fileprivate static let w = MemoryLayout<Int>.size
    /// `PAGEHDRSZ`: `mp_pgno` (a word), `mp_pad`, `mp_flags`, `mp_lower`, `mp_upper`.
    private static let header = w + 8
    private static let flagsField = w + 2
    /// `P_META`.
    private static let metaFlag: UInt16 = 0x08
    /// In `MDB_meta`: `mm_magic`, `mm_version`, `mm_address`, `mm_mapsize`, then two `MDB_db`
    /// (`md_pad` (the page size, in the first), `md_flags`, `md_depth`, five words), then
    /// `mm_last_pg` and `mm_txnid`.
    private static let mapSizeField = 8 + w
    private static let pageSizeField = 8 + 2 * w
    private static let lastPageField = 8 + 2 * w + 2 * (8 + 5 * w)
    private static let commitField = lastPageField + w
    private static let metaSize = commitField + w
    private static let magic: UInt32 = 0xBEEF_C0DE
    private static let dataVersion: UInt32 = 1

    /// Reads both meta pages of the open data file `descriptor` (of database `path`, for errors).
    static func read(_ descriptor: Int32, path: String) throws -> MetaPages {
        let first = try page(descriptor, at: 0, path: path)
        let pageSize = Int(first.load(fromByteOffset: header + pageSizeField, as: UInt32.self))
        // LMDB's page sizes are powers of two from 512 bytes to 64 KiB (mdb.c, MAX_PAGESIZE).
        guard pageSize >= 512, pageSize <= 1 << 16, pageSize & (pageSize - 1) == 0 else {
            throw CacheLogError.notADatabase(path: path, detail: LMDBMessages.message(for: MDB_INVALID))
        }
        let second = try page(descriptor, at: pageSize, path: path)
        // LMDB maps the file by the newest meta's page size, and reads its second meta page
        // that far in: a page size damaged there is a read past the end of the file, a SIGBUS.
        guard second.load(fromByteOffset: header + pageSizeField, as: UInt32.self) == UInt32(pageSize) else {
            throw CacheLogError.damaged(path: path, page: 1, detail: "records another page size than page 0")
        }
        // One meta page LMDB refuses while the other passes is damage to a database, not a file
        // that is none.
        switch (Result { try meta(first, path: path) }, Result { try meta(second, path: path) }) {
        case let (.success(zero), .success(one)):
            return MetaPages(pageSize: pageSize, metas: [zero, one])
        case (.failure, .success):
            throw CacheLogError.damaged(path: path, page: 0, detail: "is not a meta page LMDB can read, while the other is")
        case (.success, .failure):
            throw CacheLogError.damaged(path: path, page: 1, detail: "is not a meta page LMDB can read, while the other is")
        case (.failure(let error), .failure):
            throw error
        }
    }

    /// Refuses meta pages LMDB's open would follow into a crash, before it opens `path`: what
    /// it reads before any check of ours can run. A file too short to hold them is LMDB's to
    /// judge (a database being created).
    ///
    /// - Throws: ``CacheLogError/damaged(path:page:detail:)`` when one meta page is damaged,
    ///   ``CacheLogError/notADatabase(path:detail:)`` when neither is one LMDB could read.
    static func refuseDamage(_ path: String) throws {
        let descriptor = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // Creation writes both pages under LMDB's lock, which this read does not take: what it
        // refuses, it reads again a moment later first.
        for attempt in 0..<3 {
            do {
                _ = try read(descriptor, path: path)
                return
            } catch CacheLogError.truncated {
                return
            } catch {
                if attempt == 2 {
                    if case CacheLogError.notADatabase = error, let page = damagedMeta(path) {
                        throw CacheLogError.damaged(path: path, page: page, detail: "is not a meta page LMDB can read, while the other is")
                    }
                    throw error
                }
                usleep(10_000)
            }
        }
    }

    /// The meta page (0 or 1) that fails LMDB's checks while the other passes them: damage to a
    /// database, which LMDB refuses whole (`MDB_INVALID`), rather than a file that is none.
    static func damagedMeta(_ path: String) -> Int? {
        let descriptor = open(path + "/data.mdb", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let first = try? page(descriptor, at: 0, path: path)
        let stored = first.map { Int($0.load(fromByteOffset: header + pageSizeField, as: UInt32.self)) }
        let sizeValid = stored.map { $0 >= 512 && $0 <= 1 << 16 && $0 & ($0 - 1) == 0 } ?? false
        let firstValid = sizeValid && first.map { (try? meta($0, path: path)) != nil } ?? false
        let pageSize = firstValid ? stored ?? 4096 : Int(sysconf(Int32(_SC_PAGESIZE)))
        let secondValid = (try? page(descriptor, at: pageSize, path: path)).map { (try? meta($0, path: path)) != nil } ?? false
        return firstValid == secondValid ? nil : (firstValid ? 1 : 0)
    }

    /// What LMDB checks of a meta page before it opens a file (mdb.c, `mdb_env_read_header`).
    private static func meta(_ page: [UInt8], path: String) throws -> Meta {
        let flags = page.load(fromByteOffset: flagsField, as: UInt16.self)
        guard flags & metaFlag != 0, page.load(fromByteOffset: header, as: UInt32.self) == magic else {
            throw CacheLogError.notADatabase(path: path, detail: LMDBMessages.message(for: MDB_INVALID))
        }
        guard page.load(fromByteOffset: header + 4, as: UInt32.self) == dataVersion else {
            throw CacheLogError.notADatabase(path: path, detail: LMDBMessages.message(for: MDB_VERSION_MISMATCH))
        }
        // Both words are below 2^63 in any file LMDB wrote; a bigger one is damage, not a page.
        let commit = page.load(fromByteOffset: header + commitField, as: UInt.self)
        let lastPage = page.load(fromByteOffset: header + lastPageField, as: UInt.self)
        guard let commit = Int(exactly: commit), let lastPage = Int(exactly: lastPage), lastPage >= 1 else {
            throw CacheLogError.notADatabase(path: path, detail: LMDBMessages.message(for: MDB_INVALID))
        }
        return Meta(commit: commit, lastPage: lastPage, written: Array(page[(header + mapSizeField)..<(header + metaSize)]))
    }

    /// The head of the page at `offset`: its header and meta. A file too short to hold it was
    /// cut short (LMDB creates both meta pages at once, under its lock).
    private static func page(_ descriptor: Int32, at offset: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: header + metaSize)
        let read = try bytes.withUnsafeMutableBytes { try FileBytes.read(descriptor, into: $0, at: offset, operation: "pread(data.mdb)") }
        guard read == bytes.count else { throw CacheLogError.truncated(path: path, size: FileBytes.size(descriptor), expected: nil) }
        return bytes
    }
}

private extension Array where Element == UInt8 {
    /// The value at `offset`, in this machine's byte order (LMDB's files are in their writer's).
    func load<T: FixedWidthInteger>(fromByteOffset offset: Int, as type: T.Type) -> T {
        withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }
}
