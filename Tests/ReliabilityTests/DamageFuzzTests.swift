import Foundation
import Seeding
import TestSupport
import Testing

/// Random damage to random pages of a real database, then every call of the public API from
/// another process (`cachelog-damage-probe`): each answers, with a value or an error, and none
/// ends the process by a signal; recovery (`onDamage: .moveAside`) then gives a clean database.
/// `CACHELOG_DAMAGE_ROUNDS` (150 by default) and `CACHELOG_DAMAGE_SEED` run it longer by hand.
@Suite("Damage fuzz")
struct DamageFuzzTests {
    /// One way of damaging a data file, as disks, copies and stray writes do.
    enum Damage: CaseIterable {
        case randomBytes, flippedBits, randomPage, zeroedPage, otherPage, pageHeader, metaPage, cutShort
    }

    @Test(.hangGuard)
    func everyCallOnADamagedDatabase_answers_neverBySignal_andRecoveryStartsAClean() async throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["CACHELOG_DAMAGE_ROUNDS"].flatMap(Int.init) ?? 150
        let seed = environment["CACHELOG_DAMAGE_SEED"].flatMap(UInt64.init) ?? 0xDA3A6E
        let probe = try builtProduct("cachelog-damage-probe")
        let dir = try TemporaryDirectory()
        let template = dir.path() + "/template"
        let seeded = try await ChildProcess.run(probe, ["seed", template], timeout: .seconds(300))
        try #require(seeded.exited && seeded.status == 0, "\(seeded.stderrText)")
        let original = try Data(contentsOf: URL(fileURLWithPath: template + "/data.mdb"))
        let pageSize = 4096
        var generator = SeededGenerator(seed: seed)
        var found = 0
        var answered = 0
        var moved = 0
        // Two probes at a time: the machine's two cores, and two processes racing for one
        // database's recovery is the same as one.
        for start in stride(from: 0, to: rounds, by: 2) {
            try await withThrowingTaskGroup(of: (Int, String, ChildProcess.Result).self) { group in
                for round in start..<min(rounds, start + 2) {
                    var bytes = original
                    var damages: [String] = []
                    for _ in 0..<Int.random(in: 1...3, using: &generator) {
                        damages.append(Self.damage(&bytes, pageSize: pageSize, using: &generator))
                    }
                    let db = dir.path() + "/round-\(round)"
                    try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: false)
                    try bytes.write(to: URL(fileURLWithPath: db + "/data.mdb"))
                    let what = "round \(round) (seed \(seed)): \(damages.joined(separator: ", "))"
                    group.addTask { (round, what, try await ChildProcess.run(probe, ["probe", db], timeout: .seconds(120))) }
                }
                for try await (round, what, run) in group {
                    #expect(run.exited, "\(what): ended by signal \(run.status)\n\(run.stdoutText)")
                    #expect(run.status == 0, "\(what): \(run.stdoutText) \(run.stderrText)")
                    let lines = run.stdoutText.split(separator: "\n")
                    if lines.contains(where: { $0.contains("is damaged: page") }) { found += 1 }
                    if lines.contains(where: { $0.hasPrefix("verify ok") }) { answered += 1 }
                    let db = dir.path() + "/round-\(round)"
                    let files = (try? FileManager.default.contentsOfDirectory(atPath: db)) ?? []
                    if files.contains(where: { $0.hasPrefix("data.mdb.damaged-") }) {
                        moved += 1
                        // Only a database that could not be opened is moved aside.
                        #expect(lines.contains { $0.hasPrefix("client error: ") }, "\(what): moved aside, though it opened\n\(run.stdoutText)")
                    }
                    try? FileManager.default.removeItem(atPath: db)
                }
            }
        }
        print("damage fuzz: \(rounds) rounds; the check found damage in \(found), verify answered in \(answered), recovery moved \(moved) aside")
        // The damage reaches pages LMDB follows often enough that the check is what answered.
        #expect(found > rounds / 10, "the check found damage in only \(found) of \(rounds) rounds")
        #expect(moved > 0)
    }

    /// Damages `bytes` (a data file of `pageSize` pages) one way, and says how.
    static func damage(_ bytes: inout Data, pageSize: Int, using generator: inout SeededGenerator) -> String {
        let pages = bytes.count / pageSize
        guard pages > 2 else { return "nothing more (the file is \(bytes.count) bytes)" }
        let page = Int.random(in: 2..<pages, using: &generator)
        let start = page * pageSize
        let kind = Damage.allCases.randomElement(using: &generator) ?? .randomBytes
        switch kind {
        case .randomBytes:
            let offset = Int.random(in: 0..<pageSize, using: &generator)
            let count = min(2000, bytes.count - start - offset)
            for index in 0..<count { bytes[start + offset + index] = UInt8.random(in: 0...255, using: &generator) }
            return "\(count) random bytes at byte \(offset) of page \(page)"
        case .flippedBits:
            let flips = Int.random(in: 1...8, using: &generator)
            for _ in 0..<flips { bytes[start + Int.random(in: 0..<pageSize, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator) }
            return "\(flips) bits flipped in page \(page)"
        case .randomPage:
            for index in 0..<pageSize { bytes[start + index] = UInt8.random(in: 0...255, using: &generator) }
            return "page \(page) random"
        case .zeroedPage:
            bytes.replaceSubrange(start..<(start + pageSize), with: Data(count: pageSize))
            return "page \(page) zeroed"
        case .otherPage:
            let other = Int.random(in: 2..<pages, using: &generator)
            bytes.replaceSubrange(start..<(start + pageSize), with: bytes.subdata(in: (other * pageSize)..<((other + 1) * pageSize)))
            return "page \(other) copied over page \(page)"
        case .pageHeader:
            let field = Int.random(in: 0..<16, using: &generator)
            bytes[start + field] = UInt8.random(in: 0...255, using: &generator)
            return "byte \(field) of page \(page)'s header"
        case .metaPage:
            let meta = Int.random(in: 0...1, using: &generator)
            let offset = Int.random(in: 16..<160, using: &generator)
            bytes[meta * pageSize + offset] ^= 1 << UInt8.random(in: 0...7, using: &generator)
            return "a bit of byte \(offset) of meta page \(meta)"
        case .cutShort:
            let length = Int.random(in: 0..<bytes.count, using: &generator)
            bytes = bytes.prefix(length)
            return "cut short to \(length) bytes"
        }
    }
}
