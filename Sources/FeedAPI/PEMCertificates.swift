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

/// The certificates of a PEM file (curl's `--cacert`), read once and checked before any request:
/// a file that holds none (empty, not PEM, a key alone) is refused here, where it is a mistake
/// in the caller's options, rather than failing every TLS handshake later as if the server
/// were at fault. ``CurlHTTPClient`` trusts them alone, instead of the system's store.
///
/// The check is of form, not of trust: each `CERTIFICATE` block must be base64 of one DER
/// sequence holding a sequence (an X.509 certificate's outline). Other blocks (a key, a CRL) are
/// skipped. The bytes are handed to libcurl as they were read, so what was checked is what is
/// trusted, also when the file is a pipe that can be read only once (`--cacert <(…)`).
///
/// ```swift
/// let certificates = try PEMCertificates(contentsOfFile: "ca.pem")
/// let client = CurlHTTPClient(userAgent: "films/1.0", caCertificates: certificates)
/// ```
public struct PEMCertificates: Sendable, Hashable {
    /// The file they were read from.
    public let path: String
    /// The file's bytes, as read.
    public let pem: Data
    /// How many certificates the file holds.
    public let count: Int

    /// The largest file read: the system's whole bundle is about 200 KB.
    public static let maxFileSize = 16 * 1024 * 1024

    /// Reads and checks the file at `path`.
    ///
    /// - Throws: ``PEMCertificatesError`` when the file cannot be read, is a directory, is larger
    ///   than ``maxFileSize``, holds no certificate, or holds one that is not well formed.
    public init(contentsOfFile path: String) throws(PEMCertificatesError) {
        let pem = try Self.readFile(path)
        self.path = path
        self.pem = pem
        count = try Self.countCertificates(in: pem, path: path)
    }

    private static func readFile(_ path: String) throws(PEMCertificatesError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PEMCertificatesError(path: path, problem: .unreadable(String(cString: strerror(errno)))) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw PEMCertificatesError(path: path, problem: .unreadable(String(cString: strerror(errno)))) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw PEMCertificatesError(path: path, problem: .directory) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw PEMCertificatesError(path: path, problem: .unreadable(String(cString: strerror(errno))))
            }
            if count == 0 { return data }
            guard data.count + count <= maxFileSize else { throw PEMCertificatesError(path: path, problem: .tooLarge(limit: maxFileSize)) }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// The labels OpenSSL reads as a certificate.
    private static let labels: Set<String> = ["CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE"]

    private static func countCertificates(in pem: Data, path: String) throws(PEMCertificatesError) -> Int {
        // PEM is ASCII; a byte that is not stays a byte that matches nothing.
        let text = String(decoding: pem, as: UTF8.self)
        var count = 0
        var label: String?
        var base64 = ""
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = rawLine.trimmingASCIIWhitespace
            if let name = line.pemBoundary("BEGIN") {
                label = name
                base64 = ""
            } else if let name = line.pemBoundary("END") {
                if let open = label, open == name, labels.contains(name) {
                    count += 1
                    // A TRUSTED CERTIFICATE (openssl x509 -trustout) is the certificate, then its trust settings.
                    guard let der = Data(base64Encoded: base64), isCertificateOutline(der, trailing: name == "TRUSTED CERTIFICATE") else {
                        throw PEMCertificatesError(path: path, problem: .malformedCertificate(count))
                    }
                }
                label = nil
            } else if label != nil {
                base64 += line
            }
        }
        guard count > 0 else { throw PEMCertificatesError(path: path, problem: .noCertificate) }
        return count
    }

    /// A DER SEQUENCE that fills `der` exactly (or, with `trailing`, starts it) and starts with
    /// another SEQUENCE (the to-be-signed part of an X.509 certificate).
    private static func isCertificateOutline(_ der: Data, trailing: Bool = false) -> Bool {
        let bytes = [UInt8](der)
        guard bytes.count >= 4, bytes[0] == 0x30 else { return false }
        var length = Int(bytes[1])
        var header = 2
        if length & 0x80 != 0 {
            let octets = length & 0x7F
            guard (1...4).contains(octets), bytes.count > 2 + octets else { return false }
            length = bytes[2..<(2 + octets)].reduce(0) { $0 << 8 | Int($1) }
            header += octets
        }
        return length > 0 && (trailing ? header + length <= bytes.count : header + length == bytes.count) && bytes[header] == 0x30
    }
}

/// Why a file of PEM certificates was refused.
public struct PEMCertificatesError: Error, Equatable, CustomStringConvertible {
    /// What was wrong with it.
    public enum Problem: Sendable, Equatable {
        /// It could not be opened or read; the system's reason.
        case unreadable(String)
        /// It is a directory.
        case directory
        /// It is larger than the limit, in bytes.
        case tooLarge(limit: Int)
        /// It holds no `-----BEGIN CERTIFICATE-----` block.
        case noCertificate
        /// Its certificate number N (from 1) is not base64 of a DER certificate.
        case malformedCertificate(Int)
    }

    /// The file.
    public let path: String
    /// What was wrong.
    public let problem: Problem

    /// `path`'s `problem`.
    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// The file and what is wrong with it, such as `ca.pem holds no PEM certificate (-----BEGIN CERTIFICATE-----)`.
    public var description: String {
        switch problem {
        case let .unreadable(reason): "\(path) cannot be read: \(reason)"
        case .directory: "\(path) is a directory"
        case let .tooLarge(limit): "\(path) is larger than \(limit) bytes: not a file of certificates"
        case .noCertificate: "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        case let .malformedCertificate(number): "\(path): certificate \(number) is not a valid PEM certificate"
        }
    }
}

extension Substring {
    fileprivate var trimmingASCIIWhitespace: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}

extension String {
    /// The label of a `-----BEGIN LABEL-----` line (`kind` BEGIN or END), else nil.
    fileprivate func pemBoundary(_ kind: String) -> String? {
        let prefix = "-----\(kind) "
        guard hasPrefix(prefix), hasSuffix("-----"), count >= prefix.count + 5 else { return nil }
        return String(dropFirst(prefix.count).dropLast(5))
    }
}

// Apps show `error.localizedDescription` (SwiftUI's and UIKit's alerts do): the sentence, not
// "The operation could not be completed."
extension PEMCertificatesError: LocalizedError {
    /// The same sentence as `description`.
    public var errorDescription: String? { description }
}
