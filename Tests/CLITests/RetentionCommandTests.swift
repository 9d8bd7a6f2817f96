import Foundation
import TestSupport
import Testing

/// `cachelog retention` as its help writes it, through the built binary.
@Suite("cachelog retention: the policy on the command line", .timeLimit(.minutes(2)))
struct RetentionCommandTests {
    @Test
    func history0_keepsNoHistory_asTheHelpWritesIt_andTheJSONShowsNullForForeverAndForNoLimit() async throws {
        let sandbox = try Sandbox()

        let zero = try await sandbox.cachelog("--now", Day.dec1, "retention", "--history", "0", "--size-limit", "none", "--format", "json")

        #expect(zero.status == ExitCode.ok, "\(zero)")
        let policy = try #require(try zero.json()["policy"] as? [String: Any], "\(zero)")
        #expect(policy.double("history") == 0)
        #expect(policy["sizeLimit"] is NSNull, "every key of the policy is printed, null for no limit: \(zero.stdout)")

        let forever = try await sandbox.cachelog("--now", Day.dec2, "retention", "--history", "forever", "--format", "json")
        let kept = try #require(try forever.json()["policy"] as? [String: Any], "\(forever)")
        #expect(kept["history"] is NSNull, "null for ever: \(forever.stdout)")
        #expect(kept["sizeLimit"] is NSNull, "what is not given stays as it was")
    }
}
