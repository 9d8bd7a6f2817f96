import Foundation
import TestSupport
import Testing
@testable import cachelog

/// Dates are taken strictly: a date the tool cannot read exactly is a usage error, never a
/// confident answer about another moment (midnight of the same day, the next day, another calendar).
@Suite("Strict dates", .hangGuard)
struct DateParsingTests {
    @Test(arguments: [
        ("2026-12-01T10:00:00Z", 1_796_119_200.0),
        ("2026-12-01t10:00:00z", 1_796_119_200.0),
        ("2026-12-01T11:00:00+01:00", 1_796_119_200.0),
        ("2026-12-01T05:30:00-04:30", 1_796_119_200.0),
        ("2026-12-01T10:00:00.250Z", 1_796_119_200.25),
        ("2026-12-01", 1_796_083_200.0),
        ("2024-02-29", 1_709_164_800.0),
        // Proleptic Gregorian: Foundation's calendar would move year 1 two days (Julian).
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
        // A leap second is the moment after 23:59:59 UTC: the day after at 00:00:00.
        ("2026-12-31T23:59:60Z", 1_798_761_600.0),
        ("2027-01-01T00:59:60+01:00", 1_798_761_600.0),
        ("1969-12-31T23:59:60Z", 0.0),
    ])
    func accepted(_ text: String, _ seconds: Double) throws {
        let date = try #require(DateParsing.date(text))
        #expect(date.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "2026-12-01T10:00:00", "2026-12-01 10:00:00Z", "2026-12-01xyz", "2026-12-01T25:00:00Z", "2026-12-01T10:60:00Z",
        "2026-02-29", "2026-13-01", "2026-00-10", "2026-12-32", "2026-12-1", "26-12-01", "2026-12-01T10:00Z",
        "2026-12-01T10:00:00.Z", "2026-12-01T10:00:00+0100", "2026-12-01T10:00:00+25:00", "", " 2026-12-01", "2026-12-01 ",
        // Second 60 only ends a UTC day; a year before 0000 is not RFC 3339.
        "2026-12-01T10:00:60Z", "2026-12-31T23:59:61Z", "2026-12-31T23:59:60+01:00", "-0001-01-01T00:00:00Z",
    ])
    func refused(_ text: String) {
        #expect(DateParsing.date(text) == nil)
    }

    @Test
    func theBinary_refusesABadDateWithUsage_andNamesTheAcceptedForms() async throws {
        let sandbox = try Sandbox()
        for arguments in [["--now", "2026-12-01T10:00:00", "state"], ["state", "--as-of", "2026-12-05T12:00:00"], ["replay", "--from", "2026-12-01xyz"]] {
            let result = try await sandbox.run(["--db", sandbox.db] + arguments)
            #expect(result.status == ExitCode.usage, "\(arguments): \(result)")
            #expect(result.stdout.isEmpty)
        }
        let now = try await sandbox.run(["--db", sandbox.db, "--now", "2026-13-45T99:99:99Z", "state"])
        #expect(now.stderrLines.first?.contains("RFC 3339") == true, "\(now)")
    }

    /// A value that starts with "-" is --now's, refused by name ("Missing value for '--now'"
    /// sent the user looking for a value they had given); a leap second is a moment.
    @Test
    func theBinary_namesANegativeYearAsTheBadDate_andTakesALeapSecond() async throws {
        let sandbox = try Sandbox()

        let negative = try await sandbox.run(["--db", sandbox.db, "--now", "-0001-01-01T00:00:00Z", "state"])
        let leap = try await sandbox.run(["--db", sandbox.db, "--now", "2026-12-31T23:59:60Z", "validate", "--dry-run"])

        #expect(negative.status == ExitCode.usage, "\(negative)")
        #expect(negative.stderrLines.count == 1 && negative.stderr.hasPrefix("cachelog: --now: '-0001-01-01T00:00:00Z' is not a date"), "\(negative)")
        #expect(leap.status == ExitCode.ok, "\(leap)")
    }
}
