import FeedAPI
import Foundation
import Logging
import LoopbackHTTP
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Shared fixtures. Every test builds its own server and client, so tests can run in parallel.

/// In these tests `HTTPResponse` is what the loopback server sends; what a client delivers is
/// spelled `FeedAPI.HTTPResponse`.
typealias HTTPResponse = LoopbackHTTP.HTTPResponse

let anyURL = URL(string: "http://a-url.test/resource") ?? URL(fileURLWithPath: "/")

func response(_ status: Int, url: URL = anyURL, headers: [String: String] = [:]) -> FeedAPI.HTTPResponse {
    FeedAPI.HTTPResponse(url: url, statusCode: status, headerFields: headers)
}

/// A URL on 127.0.0.1 that refuses every connection for the whole test run (see ``DeadPort``).
func deadURL(path: String = "/feed") throws -> URL {
    try DeadPort.shared().baseURL.appendingPathComponent(path)
}

/// How many sockets of this process listen on `port`: 0 once a server has released its port.
///
/// Connecting to the port instead would not tell: another server (another test, another process)
/// may have been given the freed port and answer.
func listeningSockets(onPort port: Int) -> Int {
    guard let directory = opendir("/dev/fd") else { return 0 }
    defer { closedir(directory) }
    var descriptors: [Int32] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if let fd = Int32(name) { descriptors.append(fd) }
    }
    return descriptors.filter { fd in
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0 && listening != 0
            && named == 0 && Int32(address.sin_family) == AF_INET && Int(UInt16(bigEndian: address.sin_port)) == port
    }.count
}

/// An `HTTPClient` that answers with a canned result, for loader unit tests.
struct HTTPClientStub: HTTPClient {
    let answer: @Sendable (URL) async throws -> (Data, FeedAPI.HTTPResponse)

    static func success(_ data: Data, status: Int) -> HTTPClientStub {
        HTTPClientStub { url in (data, response(status, url: url)) }
    }

    static func failure(_ error: any Error) -> HTTPClientStub {
        HTTPClientStub { _ in throw error }
    }

    func get(from url: URL) async throws -> (Data, FeedAPI.HTTPResponse) {
        try await answer(url)
    }
}

