import ArgumentParser
import CacheLog
import FeedAPI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How `load` and `image` reach the remote (`--timeout`, `--cacert`, `--max-body`), and the
/// client they make of it.
struct NetworkOptions: ParsableArguments {
    /// What `--max-body` accepts: from 1 KiB (no feed is smaller) to 1 GiB (a body is held in
    /// memory, then compressed into one record).
    static let maxBodyRange = 1024...(1 << 30)

    @Option(help: ArgumentHelp(
        "Seconds the remote may take in all, from connecting to the last byte (1 to 3600).",
        discussion: "A remote that takes longer counts as unreachable: the cache serves, as when offline.",
        valueName: "seconds"))
    var timeout = 60

    @Option(help: ArgumentHelp(
        "Trust the PEM certificates in this file instead of the system's, as curl's --cacert does.",
        valueName: "file"))
    var cacert: String?

    @Option(name: .customLong("max-body"), help: ArgumentHelp(
        "The largest body accepted, in bytes (1024 to 1073741824); a larger one counts as invalid data.",
        valueName: "bytes"))
    var maxBody = CurlHTTPClient.defaultMaxBodySize

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds") }
        guard Self.maxBodyRange.contains(maxBody) else {
            throw ValidationError("--max-body must be between \(Self.maxBodyRange.lowerBound) and \(Self.maxBodyRange.upperBound) bytes")
        }
        if let cacert {
            guard isDirectory(atPath: cacert) == false, FileManager.default.isReadableFile(atPath: cacert) else {
                throw ValidationError("--cacert must name a readable file of PEM certificates, not '\(cacert)'")
            }
        }
    }

    /// The client these options describe; its User-Agent names the tool and its version.
    func client() -> CurlHTTPClient {
        CurlHTTPClient(userAgent: "cachelog/\(EventLog.version)", maxBodySize: maxBody, timeout: .seconds(timeout), caFile: cacert)
    }
}
