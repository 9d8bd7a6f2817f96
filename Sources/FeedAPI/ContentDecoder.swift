internal import CZlib
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Undoes a response's `Content-Encoding` (gzip or deflate) as the body arrives, with the system's
/// zlib. libcurl's own decoding accepts a gzip body that stops before its trailer (a truncated
/// download reads as complete), so the client asks libcurl for the bytes as sent and decodes them
/// here: a stream must reach its end and its checksum must match.
///
/// One instance per response body; not thread-safe (the transfer's thread alone uses it).
final class ContentDecoder {
    /// Why a body was refused.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// A coding this client did not ask for (it asks for gzip and deflate only).
        case unsupported(String)
        /// The stream is not what its coding says, or data follows its end.
        case corrupt(coding: String, detail: String)
        /// The body ended before the stream did (a gzip body without its trailer).
        case truncated(coding: String)
        /// The decoded body passed the limit.
        case tooLarge

        var description: String {
            switch self {
            case let .unsupported(coding): "the body's content encoding '\(coding)' is not one this client decodes (gzip, deflate)"
            case let .corrupt(coding, detail): "the \(coding) body is corrupt: \(detail)"
            case let .truncated(coding): "the \(coding) body is truncated: it ends before its \(coding) stream does"
            case .tooLarge: "the decoded body is larger than the limit"
            }
        }
    }

    private enum Coding {
        case gzip, deflate
        var name: String { self == .gzip ? "gzip" : "deflate" }
    }

    /// The codings a request asks for: those this decoder reads.
    static let acceptEncoding = "gzip, deflate"

    private let coding: Coding
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var initialised = false
    /// At the end of a stream (and of the gzip members so far).
    private var ended = false
    /// Whether any byte was given: an empty body is an empty body, whatever its header says.
    private var started = false
    /// For deflate: whether the stream turned out to be raw (no zlib header), as some servers send it.
    private var raw = false
    /// The bytes zlib consumed so far.
    private var consumedSoFar = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    /// A decoder for `contentEncoding` (the header's value), nil when the body needs none
    /// (no header, or `identity`).
    ///
    /// - Throws: ``Failure/unsupported(_:)`` for a coding other than gzip (x-gzip) and deflate,
    ///   or more than one.
    static func make(contentEncoding: String?) throws(Failure) -> ContentDecoder? {
        guard let contentEncoding else { return nil }
        let codings = contentEncoding.split(separator: ",")
            .map { String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        switch codings {
        case []: return nil
        case ["gzip"], ["x-gzip"]: return ContentDecoder(coding: .gzip)
        case ["deflate"]: return ContentDecoder(coding: .deflate)
        default: throw .unsupported(codings.joined(separator: ", "))
        }
    }

    private init(coding: Coding) {
        self.coding = coding
        stream.initialize(to: z_stream())
    }

    deinit {
        if initialised { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes `chunk`, appending what it yields to `body`, which may grow to `limit` bytes.
    func decode(_ chunk: UnsafeRawBufferPointer, into body: inout Data, limit: Int) throws(Failure) {
        guard chunk.count > 0 else { return }
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var offset = 0
        if !started {
            started = true
            try start(raw: false)
        }
        while offset < chunk.count {
            if ended {
                // Another gzip member may follow (RFC 1952 allows several); anything else is not gzip.
                guard coding == .gzip else { throw .corrupt(coding: coding.name, detail: "data follows the end of the stream") }
                guard inflateReset(stream) == Z_OK else { throw .corrupt(coding: coding.name, detail: "zlib could not go on") }
                ended = false
            }
            let available = chunk.count - offset
            let input = min(available, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base + offset)
            stream.pointee.avail_in = uInt(input)
            let result = scratch.withUnsafeMutableBufferPointer { scratch -> Int32 in
                stream.pointee.next_out = scratch.baseAddress
                stream.pointee.avail_out = uInt(scratch.count)
                return inflate(stream, Z_NO_FLUSH)
            }
            let consumed = input - Int(stream.pointee.avail_in)
            let produced = scratch.count - Int(stream.pointee.avail_out)
            switch result {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                ended = true
            case Z_DATA_ERROR where coding == .deflate && !raw && consumedSoFar == 0:
                // "deflate" is zlib's format, but some servers send raw deflate, as curl also accepts.
                inflateEnd(stream)
                initialised = false
                try start(raw: true)
                continue
            default:
                let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(result)"
                throw .corrupt(coding: coding.name, detail: detail)
            }
            guard body.count + produced <= limit else { throw .tooLarge }
            if produced > 0 { scratch.withUnsafeBufferPointer { body.append(UnsafeBufferPointer(rebasing: $0.prefix(produced))) } }
            offset += consumed
            consumedSoFar += consumed
            // Neither consumed input nor produced output: zlib needs more than this chunk has.
            if consumed == 0, produced == 0, !ended { break }
        }
    }

    /// Checks that the body ended where its stream did.
    ///
    /// - Throws: ``Failure/truncated(coding:)`` when the stream is incomplete.
    func finish() throws(Failure) {
        guard started, !ended else { return }
        throw .truncated(coding: coding.name)
    }

    private func start(raw: Bool) throws(Failure) {
        self.raw = raw
        stream.pointee = z_stream()
        // 31: gzip (15 bits of window, +16 for the gzip wrapper); 15: zlib; -15: raw deflate.
        let windowBits: Int32 = switch (coding, raw) {
        case (.gzip, _): 31
        case (.deflate, false): 15
        case (.deflate, true): -15
        }
        guard cachelog_inflate_init2(stream, windowBits) == Z_OK else {
            throw .corrupt(coding: coding.name, detail: "zlib could not start")
        }
        initialised = true
    }
}
