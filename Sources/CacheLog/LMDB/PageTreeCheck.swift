internal import CLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks every page one commit's trees reach, before LMDB follows them.
///
/// LMDB has no page checksums: it follows the page numbers, offsets and sizes a page holds,
/// so one damaged page is a crash inside liblmdb (SIGSEGV), not an error. This walk reads what
/// LMDB would follow and throws ``CacheLogError/damaged(path:page:detail:)`` at the first thing
/// it could not follow safely. What it checks, and why that suffices, is in `Format.md`
/// ("What a damaged page can do"). It reads the pages mapped, as LMDB does, up to the commit's
/// last page, which the file is checked to hold: no copy, no system call per page.
struct PageTreeCheck {
    /// The map, from page 0 to the commit's last page or the file's end, whichever is first.
    private let map: UnsafeRawBufferPointer
    /// The data file's size, and the size the commit's last page implies: a tree page past the
    /// map is a file cut short.
    private let file: (size: Int, used: Int)
    private let path: String
    private let pageSize: Int
    private let lastPage: Int
    /// One bit per page: reached already (a page reached twice is a cycle or a shared page).
    private var reached: [UInt64]
    /// What ``PageView/touchNodes(_:)`` read, kept so that its reads are made.
    private var sink = 0
    /// The commit checked: no free-list entry is from a later one (or from none, 0).
    private var commit = 0
    /// The catalog's entries: each table's name, its flags (nil for data that is no table), and
    /// the page it is on.
    private var catalog: [(name: String, flags: UInt16?, page: Int)] = []

    /// How many read transactions the check begins before it calls the database busy: one
    /// fails only when two commits land between its begin and its reading the meta page.
    static let attempts = 8

    /// Checks the newest commit of the open environment `env` (of database `path`, for errors).
    ///
    /// - Throws: ``CacheLogError/damaged(path:page:detail:)`` for a page LMDB could not follow
    ///   safely; ``CacheLogError/overlappedWrites(path:)`` when other processes kept committing.
    @available(*, noasync)
    static func run(in env: OpaquePointer, path: String) throws {
        for _ in 0..<attempts {
            var txn: OpaquePointer?
            var code = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            // Another process grew the map since this open: adopt its size (no transaction of
            // this environment is open) and begin again (lmdb.h, MDB_MAP_RESIZED).
            if code == MDB_MAP_RESIZED {
                try lmdbCheck(mdb_env_set_mapsize(env, 0), "mdb_env_set_mapsize")
                code = mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn)
            }
            try lmdbCheck(code, "mdb_txn_begin")
            guard let txn else { throw CacheLogError.lmdb("mdb_txn_begin", EINVAL) }
            defer { mdb_txn_abort(txn) }
            if try check(env: env, commit: Int(exactly: mdb_txn_id(txn)) ?? -1, path: path) { return }
        }
        throw CacheLogError.overlappedWrites(path: path)
    }

    /// Checks commit `commit`, which a read transaction of `env` holds (so that no writer
    /// reuses its pages). Returns false when its meta page was rewritten before it was read.
    @available(*, noasync)
    static func check(env: OpaquePointer, commit: Int, path: String) throws -> Bool {
        var descriptor: Int32 = -1
        try lmdbCheck(mdb_env_get_fd(env, &descriptor), "mdb_env_get_fd")
        // Commit T keeps its meta in page T % 2 until commit T + 2 rewrites it: read it twice,
        // so that a meta being rewritten while it is read is never taken for T's.
        let first = try MetaPages.read(descriptor, path: path)
        guard let slot = first.metas.firstIndex(where: { $0.commit == commit }) else { return false }
        let second = try MetaPages.read(descriptor, path: path)
        guard second.metas[slot] == first.metas[slot] else { return false }
        let meta = first.metas[slot]
        // The pages up to the commit's last that the file holds, mapped as LMDB maps them. A
        // healthy file may end before the last: LMDB counts pages a commit allocated and freed
        // again, which it never writes (Format.md). The walk reads no page past the file's end,
        // and a tree page there is a file cut short.
        let (used, overflowed) = (meta.lastPage + 1).multipliedReportingOverflow(by: first.pageSize)
        var file = stat()
        guard !overflowed, fstat(descriptor, &file) == 0 else {
            throw CacheLogError.truncated(path: path, size: Int(file.st_size), expected: overflowed ? nil : used)
        }
        let held = min(used, Int(file.st_size) / first.pageSize * first.pageSize)
        guard held >= 2 * first.pageSize else { throw CacheLogError.truncated(path: path, size: Int(file.st_size), expected: used) }
        guard let address = mmap(nil, held, PROT_READ, MAP_SHARED, descriptor, 0), address != MAP_FAILED else {
            throw CacheLogError.lmdb("mmap(data.mdb)", errno)
        }
        defer { munmap(address, held) }
        var walk = PageTreeCheck(map: UnsafeRawBufferPointer(start: address, count: held), path: path, pageSize: first.pageSize,
                                 lastPage: meta.lastPage, file: (size: Int(file.st_size), used: used))
        let free = meta.tree(.free)
        // LMDB gives the free list integer keys when it creates a file, and never other flags: a
        // write takes them as they are (sorted duplicates there are an assertion of liblmdb).
        guard free.flags == Self.integerKey else { throw CacheLogError.damaged(path: path, page: slot, detail: "records free-list flags \(free.flags)") }
        walk.commit = meta.commit
        try walk.tree(free, of: .free)
        // The catalog of a database LMDB's own tools made may hold data too (and be sorted
        // otherwise): Tables.open refuses it, once it has been read safely.
        let main = meta.tree(.main)
        try walk.tree(main, of: main.flags == 0 ? .catalog : .table(flags: main.flags))
        try walk.checkCatalog()
        return true
    }

    private init(map: UnsafeRawBufferPointer, path: String, pageSize: Int, lastPage: Int, file: (size: Int, used: Int)) {
        self.map = map
        self.file = file
        self.path = path
        self.pageSize = pageSize
        self.lastPage = lastPage
        reached = [UInt64](repeating: 0, count: (lastPage + 64) / 64)
        reached[0] |= 0b11  // the meta pages
    }

    /// What a tree's leaves hold, which decides how their nodes are read.
    private enum Contents: Equatable {
        /// The free list: a commit's id (8 bytes) → the pages it freed (`MDB_IDL`).
        case free
        /// The main tree: a table's name → its tree (`MDB_db`), or (in a database CacheLog did
        /// not make) data.
        case catalog
        /// A named table, with its flags (`MDB_DUPSORT`, `MDB_DUPFIXED`, …).
        case table(flags: UInt16)
        /// The sorted duplicates of one key of a `MDB_DUPSORT` table (keys only); `fixed` when
        /// they are all as long (`MDB_DUPFIXED`): then leaves are packed (`P_LEAF2`).
        case duplicates(fixed: Bool)

        var name: String {
            switch self {
            case .free: "free list"
            case .catalog: "table catalog"
            case .table: "table"
            case .duplicates: "duplicates of a key"
            }
        }
    }

    // mdb.c's layout (`MDB_page`, `MDB_node`, `MDB_db`), for pointer size `w`.
    private static let w = MemoryLayout<Int>.size
    private static let header = w + 8
    private static let nodeHeader = 8
    private static let branch: UInt16 = 0x01, leaf: UInt16 = 0x02, overflow: UInt16 = 0x04
    private static let packed: UInt16 = 0x20, subpage: UInt16 = 0x40
    /// `P_DIRTY`: what LMDB leaves set in a sub-page, and must never find in a page of its own
    /// on disk (a write would take it for a page of its transaction and write into the map).
    private static let dirty: UInt16 = 0x10
    private static let bigData: UInt16 = 0x01, subData: UInt16 = 0x02, dupData: UInt16 = 0x04
    private static let dupSort: UInt16 = 0x04, integerKey: UInt16 = 0x08, dupFixed: UInt16 = 0x10
    /// `CURSOR_STACK`: the deepest tree a cursor can hold.
    private static let maxDepth = 32
    /// `MDB_MAXKEYSIZE` of Debian's liblmdb; no key or duplicate is longer.
    private static let maxKeySize = 511

    /// Walks the tree `record` describes, and checks its counts against the record.
    private mutating func tree(_ record: TreeRecord, of contents: Contents) throws {
        let name = contents.name
        guard record.root != TreeRecord.none else {
            guard record.depth == 0, record.entries == 0 else { throw damaged(0, "the \(name) is empty but records \(record.entries) entries") }
            return
        }
        guard (1...Self.maxDepth).contains(record.depth) else {
            throw damaged(0, "the \(name) records a depth of \(record.depth)")
        }
        var counts = TreeCounts()
        try page(record.root, level: 1, of: record, contents, counting: &counts)
        guard counts.entries == record.entries, counts.branches == record.branchPages,
              counts.leaves == record.leafPages, counts.overflows == record.overflowPages else {
            throw damaged(record.root, "the \(name) holds \(counts) but records \(record.entries) entries, \(record.branchPages) branch, \(record.leafPages) leaf and \(record.overflowPages) overflow pages")
        }
    }

    /// Reads page `number`, `level` deep in `record`'s tree, and everything below it.
    private mutating func page(_ number: Int, level: Int, of record: TreeRecord, _ contents: Contents, counting counts: inout TreeCounts) throws {
        try reach(number, pages: 1)
        let start = try read(number)
        let isLeaf = level == record.depth
        var expected = isLeaf ? Self.leaf : Self.branch
        if isLeaf, contents == .duplicates(fixed: true) { expected |= Self.packed }
        let view = PageView(bytes: map, start: start, size: pageSize)
        guard view.field(UInt16.self, at: start + Self.header - 6) == expected else {
            throw damaged(number, "is not the \(isLeaf ? "leaf" : "branch") page the \(contents.name) has \(level) deep")
        }
        let count = try view.count(packedKeySize: expected & Self.packed != 0 ? record.pad : nil, damaged: damage(number))
        if isLeaf { counts.leaves += 1 } else { counts.branches += 1 }
        if expected & Self.packed != 0 {
            counts.entries += count
            return
        }
        // LMDB keeps two children in every branch page of a table (liblmdb asserts it), one entry
        // in every leaf (an empty tree has no root; a reverse read of an empty leaf faults).
        guard count >= (isLeaf ? 1 : contents == .free ? 1 : 2) else {
            throw damaged(number, isLeaf ? "is a leaf page with no entries" : "is a branch page with \(count == 1 ? "one child" : "no children")")
        }
        sink &+= view.touchNodes(count)
        for index in 0..<count {
            let node = try view.node(index, damaged: damage(number))
            if isLeaf {
                try leafNode(node, in: view, page: number, contents, counting: &counts)
            } else {
                guard node.keySize <= Self.maxKeySize else { throw damaged(number, "holds a key of \(node.keySize) bytes") }
                let child = Int(node.low) | Int(node.high) << 16 | Int(node.flags) << 32
                try page(child, level: level + 1, of: record, contents, counting: &counts)
            }
        }
    }

    /// Checks one leaf node of `contents`, and the tree, sub-page or overflow pages it leads to.
    private mutating func leafNode(_ node: PageView.Node, in view: PageView, page number: Int, _ contents: Contents, counting counts: inout TreeCounts) throws {
        let size = Int(node.low) | Int(node.high) << 16
        guard node.keySize <= Self.maxKeySize else { throw damaged(number, "holds a key of \(node.keySize) bytes") }
        guard Self.allows(node.flags, in: contents) else { throw damaged(number, "holds a node with flags \(node.flags) in the \(contents.name)") }
        counts.entries += 1
        if contents == .free {
            guard node.keySize == 8 else { throw damaged(number, "holds a free-list key of \(node.keySize) bytes") }
            // The commit that freed the pages: one before this one (commit 0 is none).
            let freedBy = view.field(UInt64.self, at: node.data - 8)
            guard freedBy >= 1, freedBy <= UInt64(commit) else { throw damaged(number, "holds free pages of commit \(freedBy), in commit \(commit)") }
        }
        if case .table(let flags) = contents, flags & Self.integerKey != 0, node.keySize != 4, node.keySize != 8 {
            throw damaged(number, "holds an integer key of \(node.keySize) bytes")
        }
        if node.flags == Self.bigData {
            guard node.data + 8 <= view.end else { throw damaged(number, "holds a node past its end") }
            let first = Int(truncatingIfNeeded: view.field(UInt64.self, at: node.data))
            let data = try overflowRun(first, holding: size, counting: &counts)
            if contents == .free { try freeList(data, page: first) }
            return
        }
        guard node.data + size <= view.end else { throw damaged(number, "holds a node past its end") }
        if contents == .catalog, node.flags != Self.subData { catalog.append((view.key(node), nil, number)) }
        switch contents {
        case .free:
            try freeList(UnsafeRawBufferPointer(rebasing: map[node.data..<(node.data + size)]), page: number)
        case .catalog where node.flags == Self.subData:
            guard size == TreeRecord.size else { throw damaged(number, "holds a table record of \(size) bytes") }
            let record = TreeRecord(view.bytes, at: node.data)
            let flags = record.flags
            guard flags & ~UInt16(0x7E) == 0 else { throw damaged(number, "holds a table with flags \(flags)") }
            catalog.append((view.key(node), flags, number))
            try tree(record, of: .table(flags: flags))
        case .table(let flags) where node.flags == Self.dupData | Self.subData:
            guard size == TreeRecord.size else { throw damaged(number, "holds a duplicates record of \(size) bytes") }
            let record = TreeRecord(view.bytes, at: node.data)
            counts.entries -= 1
            try duplicates(record, fixed: flags & Self.dupFixed != 0, page: number, counting: &counts)
        case .table(let flags) where node.flags == Self.dupData:
            let fixed = flags & Self.dupFixed != 0
            let sub = PageView(bytes: view.bytes, start: node.data, size: size)
            var kinds = Self.leaf | Self.subpage
            if fixed { kinds |= Self.packed }
            guard size >= Self.header, sub.field(UInt16.self, at: node.data + Self.header - 6) & ~Self.dirty == kinds else {
                throw damaged(number, "holds duplicates that are not a sub-page")
            }
            let keySize = Int(sub.field(UInt16.self, at: node.data + Self.w))
            guard !fixed || (1...Self.maxKeySize).contains(keySize) else { throw damaged(number, "holds duplicates of \(keySize) bytes each") }
            let count = try sub.count(packedKeySize: fixed ? keySize : nil, damaged: damage(number))
            if !fixed {
                for index in 0..<count {
                    let dup = try sub.node(index, damaged: damage(number))
                    guard dup.flags == 0, dup.keySize <= Self.maxKeySize, dup.data + (Int(dup.low) | Int(dup.high) << 16) <= sub.end else {
                        throw damaged(number, "holds a duplicate past its sub-page")
                    }
                }
            }
            counts.entries += count - 1
        default:
            break
        }
    }

    /// Refuses a CacheLog catalog (one with an `events` and a `meta` table) where a table of
    /// CacheLog's has other flags than CacheLog gives it, or is data: LMDB takes a table's flags
    /// from its entry unchecked, so one flipped bit there reads every key of the table wrongly.
    private func checkCatalog() throws {
        let names = Set(catalog.map(\.name))
        guard names.contains(Tables.names.events), names.contains(Tables.names.meta) else { return }
        for entry in catalog {
            guard let expected = Tables.flags(of: entry.name) else { continue }
            guard let flags = entry.flags else { throw damaged(entry.page, "holds the \(entry.name) table as data, not as a table") }
            guard flags == expected else {
                throw damaged(entry.page, "holds the catalog entry of the \(entry.name) table with flags \(flags), where CacheLog gives it \(expected)")
            }
        }
    }

    /// Whether a leaf node of `contents` may have `flags`: big data (an overflow run) in the free
    /// list and plain tables, a table record in the catalog, duplicates only where they are sorted.
    private static func allows(_ flags: UInt16, in contents: Contents) -> Bool {
        switch contents {
        case .free: flags == 0 || flags == bigData
        case .catalog: flags == 0 || flags == bigData || flags == subData
        case .table(let table) where table & dupSort != 0: flags == 0 || flags == dupData || flags == dupData | subData
        case .table: flags == 0 || flags == bigData
        case .duplicates: flags == 0
        }
    }

    /// Walks the sub-tree of one key's duplicates; the table counts their entries, not their pages.
    private mutating func duplicates(_ record: TreeRecord, fixed: Bool, page number: Int, counting counts: inout TreeCounts) throws {
        guard record.root != TreeRecord.none, (1...Self.maxDepth).contains(record.depth) else {
            throw damaged(number, "holds duplicates with a depth of \(record.depth)")
        }
        guard !fixed || (1...Self.maxKeySize).contains(record.pad) else { throw damaged(number, "holds duplicates of \(record.pad) bytes each") }
        var own = TreeCounts()
        try page(record.root, level: 1, of: record, .duplicates(fixed: fixed), counting: &own)
        guard own.entries == record.entries, own.branches == record.branchPages, own.leaves == record.leafPages else {
            throw damaged(record.root, "holds \(own) but its record says \(record.entries) entries")
        }
        counts.entries += own.entries
    }

    /// Reaches the `MDB_IDL` of pages a commit freed: a count, then that many page numbers.
    private mutating func freeList(_ data: UnsafeRawBufferPointer, page number: Int) throws {
        guard data.count >= 8, data.count % 8 == 0 else { throw damaged(number, "holds a free list of \(data.count) bytes") }
        let count = data.loadUnaligned(as: UInt64.self)
        guard count < UInt64(data.count / 8) else { throw damaged(number, "holds a free list of \(count) pages in \(data.count) bytes") }
        for index in 0..<Int(count) {
            let free = data.loadUnaligned(fromByteOffset: 8 * (index + 1), as: UInt64.self)
            try reach(Int(truncatingIfNeeded: free), pages: 1, from: number)
        }
    }

    /// Reaches the overflow pages from `first` holding `size` bytes, and returns those bytes.
    private mutating func overflowRun(_ first: Int, holding size: Int, counting counts: inout TreeCounts) throws -> UnsafeRawBufferPointer {
        guard first >= 2, first <= lastPage else { throw damaged(first, "is past the database's last page, \(lastPage)") }
        let start = try read(first)
        let pages = Int(field(UInt32.self, at: start + Self.header - 4))
        guard field(UInt16.self, at: start + Self.header - 6) == Self.overflow, pages >= 1,
              Self.header + size <= pages * pageSize else {
            throw damaged(first, "is not an overflow page holding \(size) bytes")
        }
        guard pages <= map.count / pageSize - first else { throw CacheLogError.truncated(path: path, size: file.size, expected: file.used) }
        try reach(first, pages: pages)
        counts.overflows += pages
        return UnsafeRawBufferPointer(rebasing: map[(start + Self.header)..<(start + Self.header + size)])
    }

    /// Marks `pages` pages from `first` reached, refusing a page outside the commit or reached twice.
    private mutating func reach(_ first: Int, pages: Int, from referrer: Int? = nil) throws {
        guard first >= 2, pages <= lastPage, first <= lastPage - pages + 1 else {
            throw damaged(referrer ?? first, "leads past the database's last page, \(lastPage)")
        }
        for number in first..<(first + pages) {
            let (word, bit) = (number / 64, UInt64(1) << UInt64(number % 64))
            guard reached[word] & bit == 0 else { throw damaged(referrer ?? number, "is reached twice: the trees cross") }
            reached[word] |= bit
        }
    }

    /// Where page `number` (of the commit: at most its last) starts in the map, once it says it
    /// is that page.
    private func read(_ number: Int) throws -> Int {
        guard number < map.count / pageSize else { throw CacheLogError.truncated(path: path, size: file.size, expected: file.used) }
        let start = number * pageSize
        let says = field(UInt64.self, at: start)
        guard says == UInt64(number) else { throw damaged(number, "says it is page \(says)") }
        return start
    }

    private func field<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        map.loadUnaligned(fromByteOffset: offset, as: T.self)
    }

    private func damaged(_ page: Int, _ detail: String) -> CacheLogError {
        .damaged(path: path, page: page, detail: detail)
    }

    /// The error for a flaw of page `page`, as a closure that holds the path, not this walk: a
    /// closure holding the walk would make each later step copy its bitmap of pages reached.
    private func damage(_ page: Int) -> (String) -> CacheLogError {
        let path = path
        return { .damaged(path: path, page: page, detail: $0) }
    }
}

/// Pages and entries a walk of one tree found.
private struct TreeCounts: CustomStringConvertible {
    var entries = 0, branches = 0, leaves = 0, overflows = 0
    var description: String { "\(entries) entries, \(branches) branch, \(leaves) leaf and \(overflows) overflow pages" }
}
