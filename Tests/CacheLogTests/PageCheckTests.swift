import Foundation
import TestSupport
import Testing
@testable import CacheLog

/// The page check an open makes before LMDB follows a page (``PageTreeCheck``): each damage LMDB
/// would follow into a crash is an error naming the page, and a database moved aside on damage
/// (`onDamage: .moveAside`) is kept, replaced by a new one that says why.
@Suite("The page check and damage recovery")
struct PageCheckTests {
    /// A database with branch pages in the events table, overflow pages, a free list and a key
    /// whose seqs fill a tree of their own in the key index.
    private func seeded(_ dir: TemporaryDirectory) async throws -> String {
        let db = dir.path()
        do {
            let log = try EventLog(path: db, options: .init(durability: .unsynced))
            for round in 0..<300 {
                let payload = Data((0..<(round % 10 == 0 ? 9000 : 300)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) })
                _ = try await log.append(.put(key: "key-\(round % 40)", payload: payload, timestamp: Date(timeIntervalSince1970: 1_700_000_000)))
            }
            try log.sync()
        }
        try await waitUntilClosed(db)
        return db
    }

    private func damaged(_ db: String, _ expected: (Int, String) -> Bool, options: EventLog.Options = .init()) {
        #expect {
            _ = try EventLog(path: db, options: options)
        } throws: { error in
            guard case CacheLogError.damaged(let path, let page, let detail) = error else { return false }
            return path.hasSuffix(db.split(separator: "/").last.map(String.init) ?? db) && expected(page, detail)
        }
    }

    @Test func open_ofAnUndamagedDatabase_findsNothing_andVerifyIsClean() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        let log = try EventLog(path: db)
        #expect(try log.verify().isClean)
        #expect(try log.lastSeq() == 300)
    }

    @Test func open_refusesABranchWhoseChildIsItself_aCycle() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        let branch = try #require(file.table("events").flatMap { file.isBranch($0) ? $0 : nil }, "the events table has no branch root")
        file.setChild(0, of: branch, to: branch)
        try file.save()
        damaged(db) { page, detail in page == branch && detail.contains("reached twice") }
    }

    @Test func open_refusesANodeOffsetOutsideItsPage() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        let root = try #require(file.table("state"))
        file.setU16(at: root * file.pageSize + 16, 0xFFF0)
        try file.save()
        damaged(db) { page, detail in page == root && detail.contains("has node 0") }
    }

    @Test func open_refusesAPageMarkedDirty_whichAWriteWouldChangeInTheMap() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        let root = try #require(file.table("meta"))
        file.setU16(at: root * file.pageSize + 10, file.u16(at: root * file.pageSize + 10) | 0x10)
        try file.save()
        damaged(db) { page, detail in page == root && detail.contains("is not the leaf page") }
    }

    @Test func open_refusesAFreeListNamingAPagePastTheEnd() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        let free = try #require(file.root(tree: 0), "no free list")
        // The first node of the free list's leaf: its IDL's first page number.
        let node = free * file.pageSize + Int(file.u16(at: free * file.pageSize + 16))
        let data = node + 8 + Int(file.u16(at: node + 6))
        try #require(file.u64(at: data) >= 1)
        file.setU64(at: data + 8, UInt64(file.lastPage + 5))
        try file.save()
        damaged(db) { page, detail in page == free && detail.contains("past the database's last page") }
    }

    @Test func open_refusesANewestMetaWithAnotherPageSize_readPastTheFileByLMDB() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        file.setU32(at: file.pageSize + 16 + 24, UInt32(file.pageSize) | 1 << 22)
        try file.save()
        damaged(db) { page, detail in page == 1 && detail.contains("another page size") }
    }

    /// liblmdb asserts that a table's branch page has two children; a reverse read of an empty
    /// leaf dereferences a node that is not there.
    @Test func open_refusesABranchWithOneChild_andALeafWithNoEntries() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        let original = try DataFilePages(db)
        let branch = try #require(original.table("events").flatMap { original.isBranch($0) ? $0 : nil })
        var one = original
        one.setU16(at: branch * one.pageSize + 12, 18)
        try one.save()
        damaged(db) { page, detail in page == branch && detail == "is a branch page with one child" }

        var empty = original
        let leaf = empty.child(0, of: branch)
        empty.setU16(at: leaf * empty.pageSize + 12, 16)
        try empty.save()
        damaged(db) { page, detail in page == leaf && detail == "is a leaf page with no entries" }
    }

    /// A write takes the free list as the meta page says it is: sorted duplicates there, or pages
    /// freed by commit 0, are assertions inside liblmdb at the first save.
    @Test func open_refusesAFreeListWithOtherFlags_orPagesFreedByCommitZero() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        let original = try DataFilePages(db)
        var flags = original
        flags.setU16(at: flags.newestMeta * flags.pageSize + 16 + 24 + 4, 0x0C)
        try flags.save()
        damaged(db) { page, detail in page == original.newestMeta && detail == "records free-list flags 12" }

        var zero = original
        let free = try #require(zero.root(tree: 0))
        let node = free * zero.pageSize + Int(zero.u16(at: free * zero.pageSize + 16))
        zero.setU64(at: node + 8, 0)
        try zero.save()
        damaged(db) { page, detail in page == free && detail.hasPrefix("holds free pages of commit 0") }
    }

    /// LMDB's open divides by page 0's page size: 0 there was a SIGFPE in every process.
    @Test func open_refusesAPageSizeOfZeroInMetaPage0() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        file.setU32(at: 16 + 24, 0)
        try file.save()
        damaged(db) { page, detail in page == 0 && detail.contains("not a meta page LMDB can read") }
    }

    /// Between one process moving a damaged file aside and its new database's creation, another
    /// finds the moved file and the lock file: a database being born, not a stranger's directory.
    @Test func open_ofADirectoryHoldingOnlyAMovedAsideFile_isNoDatabaseYet_andCreatesOne() async throws {
        let dir = try TemporaryDirectory()
        let db = dir.path()
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        try Data(repeating: 0xA5, count: 8192).write(to: URL(fileURLWithPath: db + "/data.mdb.damaged-20261207T144035Z"))
        #expect(throws: CacheLogError.noDatabase(path: db)) { _ = try EventLog(path: db, options: .init(createIfMissing: false)) }
        #expect(try EventLog(path: db).lastSeq() == 0)
    }

    @Test func verify_onALogOpenBeforeTheDamage_throwsTheDamage_neverCrashes() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        let log = try EventLog(path: db, options: .init(readOnly: true))
        var file = try DataFilePages(db)
        let root = try #require(file.table("events"))
        file.setU64(at: root * file.pageSize, UInt64(root + 1))
        try file.save()
        #expect {
            _ = try log.verify()
        } throws: { error in
            guard case CacheLogError.damaged(_, let page, let detail) = error else { return false }
            return page == root && detail.contains("says it is page \(root + 1)")
        }
    }

    @Test func moveAside_keepsTheDamagedFile_startsANewDatabase_andItsFirstRecordSaysWhy() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        var file = try DataFilePages(db)
        let branch = try #require(file.table("events"))
        file.setChild(0, of: branch, to: branch)
        try file.save()
        let damagedBytes = try Data(contentsOf: URL(fileURLWithPath: db + "/data.mdb"))
        let now = Date(timeIntervalSince1970: 1_796_000_000)  // 2026-11-30T00:53:20Z

        let log = try EventLog(path: db, options: .init(clock: { now }, onDamage: .moveAside))
        let aside = "data.mdb.damaged-20261130T005320Z"
        #expect(try FileManager.default.contentsOfDirectory(atPath: db).sorted() == ["data.mdb", aside, "lock.mdb"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: db + "/" + aside)) == damagedBytes)
        let first = try log.events()
        #expect(first.count == 1)
        guard case .event(let event) = first.first, let (policy, by) = event.retention else {
            Issue.record("the new database's first record is \(first)")
            return
        }
        #expect(policy == .default)
        #expect(by.contains("aside to \(aside): ") && by.contains("page \(branch) is reached twice"), "\(by)")
        #expect(try log.verify().isClean)
        _ = try await log.append(.put(key: "after", payload: Data("1".utf8), timestamp: now))
        #expect(try log.retrieve("after")?.payload == Data("1".utf8))
    }

    @Test func moveAside_neverMovesAnUndamagedDatabase_norOneOpenedReadOnly() async throws {
        let dir = try TemporaryDirectory()
        let db = try await seeded(dir)
        do {
            let log = try EventLog(path: db, options: .init(onDamage: .moveAside))
            #expect(try log.lastSeq() == 300)
        }
        try await waitUntilClosed(db)
        var file = try DataFilePages(db)
        let branch = try #require(file.table("events"))
        file.setChild(0, of: branch, to: branch)
        try file.save()
        damaged(db, { page, _ in page == branch }, options: .init(readOnly: true, onDamage: .moveAside))
        #expect(try FileManager.default.contentsOfDirectory(atPath: db).sorted() == ["data.mdb", "lock.mdb"])
    }
}

/// The pages of a closed database's data file, read and changed as bytes (mdb.c's layout, the
/// one PageTreeCheck reads), for planting damage where LMDB would follow it.
struct DataFilePages {
    let path: String
    var bytes: [UInt8]
    let pageSize: Int

    init(_ db: String) throws {
        path = db + "/data.mdb"
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        pageSize = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16 + 24, as: UInt32.self) })
    }

    func save() throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    func u16(at offset: Int) -> UInt16 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self) } }
    func u64(at offset: Int) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) } }
    mutating func setU16(at offset: Int, _ value: UInt16) { withUnsafeBytes(of: value) { bytes.replaceSubrange(offset..<(offset + 2), with: $0) } }
    mutating func setU32(at offset: Int, _ value: UInt32) { withUnsafeBytes(of: value) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) } }
    mutating func setU64(at offset: Int, _ value: UInt64) { withUnsafeBytes(of: value) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) } }

    /// The meta page of the newest commit.
    var newestMeta: Int { u64(at: 16 + 128) >= u64(at: pageSize + 16 + 128) ? 0 : 1 }
    var lastPage: Int { Int(u64(at: newestMeta * pageSize + 16 + 120)) }

    /// The root of tree 0 (the free list) or 1 (the catalog) of the newest commit; nil when empty.
    func root(tree: Int) -> Int? {
        let root = u64(at: newestMeta * pageSize + 16 + 24 + 48 * tree + 40)
        return root == UInt64.max ? nil : Int(root)
    }

    /// The root page of the table `name`, from the catalog (a single leaf).
    func table(_ name: String) -> Int? {
        guard let catalog = root(tree: 1) else { return nil }
        let page = catalog * pageSize
        for index in 0..<((Int(u16(at: page + 12)) - 16) / 2) {
            let node = page + Int(u16(at: page + 16 + 2 * index))
            let keySize = Int(u16(at: node + 6))
            if Array(bytes[(node + 8)..<(node + 8 + keySize)]) == Array(name.utf8) {
                return Int(u64(at: node + 8 + keySize + 40))
            }
        }
        return nil
    }

    func isBranch(_ page: Int) -> Bool { u16(at: page * pageSize + 10) == 0x01 }

    /// Branch `page`'s child `index`.
    func child(_ index: Int, of page: Int) -> Int {
        let node = page * pageSize + Int(u16(at: page * pageSize + 16 + 2 * index))
        return Int(u16(at: node)) | Int(u16(at: node + 2)) << 16 | Int(u16(at: node + 4)) << 32
    }

    /// Points branch `page`'s child `index` at page `child`.
    mutating func setChild(_ index: Int, of page: Int, to child: Int) {
        let node = page * pageSize + Int(u16(at: page * pageSize + 16 + 2 * index))
        setU16(at: node, UInt16(child & 0xFFFF))
        setU16(at: node + 2, UInt16((child >> 16) & 0xFFFF))
        setU16(at: node + 4, UInt16((child >> 32) & 0xFFFF))
    }
}
