import Foundation
import TestSupport
import Testing
@testable import CacheLog

@Suite("Log stats")
struct StatsTests {
    @Test func byKey_countsKeysThatDifferOnlyInUnicodeNormalizationApart() async throws {
        let dir = try TemporaryDirectory()
        let log = try makeLog(dir)
        let (nfc, nfd) = ("caf\u{E9}", "cafe\u{301}")
        try await log.append(.put(key: nfc, payload: payload("a"), timestamp: Date(timeIntervalSince1970: 1)))
        try await log.append([.delete(key: nfd, reason: .explicit), .put(key: nfd, payload: payload("b"), timestamp: Date(timeIntervalSince1970: 2))])

        let stats = try log.stats()

        var nfcCounts = LogStats.Counts(), nfdCounts = LogStats.Counts()
        nfcCounts.put = 1
        nfdCounts.put = 1
        nfdCounts.delete = 1
        #expect(stats.byKey == [Array(nfc.utf8): nfcCounts, Array(nfd.utf8): nfdCounts])
    }
}
