import Foundation
import TestSupport
import Testing

/// `audit` and `report` after a compaction, through the built binary: the story starts at the
/// compaction base with the version live there; a put kept only for the bytes a later refresh
/// refers to is not a version, and the refreshes the compaction removed still covered their days.
@Suite("cachelog audit and report after a compaction", .hangGuard)
struct CompactedHistoryTests {
    /// `films` loaded each day at 10:00 from Dec 1 to Dec 6 under a 1-day policy (an unchanged
    /// feed: each put refers to the first one's bytes), then compacted before the last save.
    /// Returns the seqs of the last two puts.
    func refreshedDailyThenCompacted(_ sandbox: Sandbox) async throws -> (base: Int, last: Int) {
        for day in 1...6 {
            let loaded = try await sandbox.cachelog("--now", "2026-12-0\(day)T10:00:00Z", "load", sandbox.url("/films.json"),
                                                    "--key", "films", "--contract", "films", "--max-age", "1d")
            try #require(loaded.status == ExitCode.ok, "\(loaded)")
        }
        let puts = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().compactMap { $0.int("seq") }
        try #require(puts.count == 6, "\(puts)")
        let compacted = try await sandbox.cachelog("--now", "2026-12-06T10:00:00Z", "compact", "--before", "2026-12-06T10:00:00Z")
        try #require(compacted.status == ExitCode.ok, "\(compacted)")
        let kept = try await sandbox.cachelog("replay", "--type", "put", "--format", "jsonl").jsonLines().compactMap { $0.int("seq") }
        // The first put stays for its bytes, before the base: the case that once read as a version.
        try #require(kept == [puts[0], puts[4], puts[5]], "\(kept)")
        return (puts[4], puts[5])
    }

    @Test
    func audit_afterCompaction_startsWithTheVersionLiveAtTheBase_andShowsNoStaleTime() async throws {
        let sandbox = try Sandbox()
        let (base, last) = try await refreshedDailyThenCompacted(sandbox)

        let audit = try await sandbox.cachelog("--now", "2026-12-06T20:00:00Z", "audit", "--key", "films", "--format", "json")
        #expect(audit.status == ExitCode.ok, "\(audit)")
        let keys = try #require(try audit.json()["keys"] as? [[String: Any]])
        let timeline = try #require(keys.first?["timeline"] as? [[String: Any]])
        #expect(timeline.compactMap { $0.string("kind") } == ["written", "stale", "replaced"], "\(timeline)")
        #expect(timeline.compactMap { $0.string("at") } == ["2026-12-05T10:00:00Z", "2026-12-06T10:00:00Z", "2026-12-06T10:00:00Z"])
        #expect(timeline.map { $0.int("seq") } == [base, base, last])
        #expect(timeline.first?.string("text")?.hasSuffix("; live when the history up to seq \(base) was compacted") == true, "\(timeline)")
    }

    @Test
    func report_afterCompaction_agreesWithTheAudit_freshFromTheBaseOn() async throws {
        let sandbox = try Sandbox()
        _ = try await refreshedDailyThenCompacted(sandbox)

        let report = try await sandbox.cachelog("--now", "2026-12-06T20:00:00Z", "report", "--out", "-")
        #expect(report.status == ExitCode.ok, "\(report)")
        let page = HTMLPage(report.stdout)
        // The window starts where the history does: the version live at the base, Dec 5 10:00.
        #expect(page.seconds(of: "films") == [34 * 3600, 0, 0])
        // The put live at the base, then the last save's delete and put; not the first put.
        #expect(page.eventCounts == ["films": 3])
        #expect(try Self.bands(page) == [0, 1], "one band, fresh")
        // Over a window from Dec 1, the compacted days are no cache yet, never stale.
        let wide = HTMLPage(try await sandbox.cachelog("--now", "2026-12-06T20:00:00Z", "report", "--from", "2026-12-01", "--out", "-").stdout)
        #expect(wide.seconds(of: "films") == [34 * 3600, 0, 0])
        #expect(try Self.bands(wide) == [0, 0, 4 * 86_400 + 10 * 3600, 1], "no cache yet, then fresh")
    }

    /// The page's data for the one key: each band's start after the previous one's, and its state.
    static func bands(_ page: HTMLPage) throws -> [Double] {
        let keys = try #require(try page.data()["keys"] as? [[String: Any]])
        return try #require(keys.first?["bands"] as? [Double])
    }
}
