import FeedAPI
import Foundation
import TestSupport
import Testing

/// A file of PEM certificates is checked once, before any request: one that holds none is refused.
@Suite("PEMCertificates")
struct PEMCertificatesTests {
    private func write(_ text: String, in directory: TemporaryDirectory, as name: String = "ca.pem") throws -> String {
        let path = directory.path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A real certificate, made by openssl for the test.
    private func certificate(in directory: TemporaryDirectory) async throws -> String {
        let path = directory.path("cert.pem")
        let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=test", "-keyout", directory.path("key.pem"), "-out", path,
        ])
        try #require(made.status == 0, "openssl: \(made.stderrText)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test
    func aFileOfCertificates_isRead_withItsCount() async throws {
        let directory = try TemporaryDirectory()
        let one = try await certificate(in: directory)
        let path = try write("a comment before\n" + one + one.replacingOccurrences(of: "\n", with: "\r\n"), in: directory, as: "two.pem")
        let certificates = try PEMCertificates(contentsOfFile: path)
        #expect(certificates.count == 2)
        #expect(certificates.pem == (try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// `openssl x509 -trustout` writes a TRUSTED CERTIFICATE: the certificate, then its trust
    /// settings. curl's --cacert takes it; so does this.
    @Test
    func aTrustedCertificate_isRead() async throws {
        let directory = try TemporaryDirectory()
        _ = try await certificate(in: directory)
        let trusted = directory.path("trusted.pem")
        let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), [
            "x509", "-in", directory.path("cert.pem"), "-trustout", "-addtrust", "serverAuth", "-out", trusted,
        ])
        try #require(made.status == 0, "openssl: \(made.stderrText)")
        #expect(try String(contentsOfFile: trusted, encoding: .utf8).hasPrefix("-----BEGIN TRUSTED CERTIFICATE-----"))
        #expect(try PEMCertificates(contentsOfFile: trusted).count == 1)
    }

    @Test
    func aFileWithoutACertificate_isRefused() throws {
        let directory = try TemporaryDirectory()
        for text in ["", "hello\n", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"] {
            let path = try write(text, in: directory)
            #expect(throws: PEMCertificatesError(path: path, problem: .noCertificate)) { try PEMCertificates(contentsOfFile: path) }
        }
    }

    @Test
    func aCertificateBlockThatIsNoCertificate_isRefusedByNumber() async throws {
        let directory = try TemporaryDirectory()
        let good = try await certificate(in: directory)
        let path = try write(good + "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n", in: directory)
        #expect(throws: PEMCertificatesError(path: path, problem: .malformedCertificate(2))) { try PEMCertificates(contentsOfFile: path) }
    }

    @Test
    func aMissingFileOrADirectory_isRefused() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("missing.pem")
        #expect(throws: PEMCertificatesError(path: missing, problem: .unreadable("No such file or directory"))) {
            try PEMCertificates(contentsOfFile: missing)
        }
        #expect(throws: PEMCertificatesError(path: directory.url.path, problem: .directory)) { try PEMCertificates(contentsOfFile: directory.url.path) }
    }
}
