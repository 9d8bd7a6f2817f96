internal import CCurl
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The one Swift file that speaks libcurl (through the CCurl shim): the rest of FeedAPI sees
// `CurlLibrary` and `CurlRequest`, never a C name.

/// libcurl's shared library, loaded with `dlopen` when a request first needs it, so that a program
/// that never goes to the network never maps it (nor TLS, Kerberos, LDAP… which it brings).
struct CurlLibrary: @unchecked Sendable {
    /// The library's functions; loaded once per process, never unloaded.
    fileprivate let functions: OpaquePointer

    /// The file names libcurl is found under on this platform, tried in order.
    static var defaultNames: [String] {
        #if canImport(Darwin)
        ["libcurl.4.dylib"]
        #else
        ["libcurl.so.4"]
        #endif
    }

    /// The first of `names` that loads, or why none did (the dynamic loader's words).
    static func load(_ names: [String]) -> Result<CurlLibrary, CurlLoadError> {
        var error = [CChar](repeating: 0, count: 512)
        let copies = names.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let loaded = copies.map { UnsafePointer($0) }.withUnsafeBufferPointer { names in
            names.baseAddress.flatMap { ccurl_load($0, names.count, &error, error.count) }
        }
        guard let loaded else {
            return .failure(CurlLoadError(names: names, reason: String(decoding: error.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)))
        }
        return .success(CurlLibrary(functions: loaded))
    }
}

/// libcurl could not be loaded.
struct CurlLoadError: Error {
    let names: [String]
    /// The dynamic loader's explanation, such as `libcurl.so.4: cannot open shared object file`.
    let reason: String
}

/// One GET through libcurl's easy interface. ``perform()`` blocks its thread until the transfer
/// ends; ``cancel()``, from any thread, makes it end within about a second (libcurl asks the
/// progress callback at least that often, also while nothing arrives).
final class CurlRequest: @unchecked Sendable {
    /// How a transfer ended.
    enum Outcome {
        case response(Data, HTTPResponse)
        case failure(HTTPClientError)
        case cancelled
    }

    struct Options {
        var userAgent: String
        var maxBodySize: Int
        /// 0: no limit.
        var timeoutMilliseconds: Int
        var caFile: String?
    }

    /// Redirects followed before giving up, as browsers do (Chrome and Firefox: 20).
    static let maxRedirects = 20

    private let library: CurlLibrary
    private let url: URL
    private let headers: [String: String]
    private let options: Options
    private let cancelled = Locked(false)

    // Touched only by the thread in perform() (and libcurl's callbacks, on that same thread).
    private var body = Data()
    private var fields: [String: String] = [:]
    private var tooLarge = false

    init(library: CurlLibrary, url: URL, headers: [String: String], options: Options) {
        self.library = library
        self.url = url
        self.headers = headers
        self.options = options
    }

    /// Asks the transfer to stop.
    func cancel() { cancelled.withLock { $0 = true } }

    fileprivate var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Runs the transfer on the calling thread.
    func perform() -> Outcome {
        let functions = library.functions
        guard let handle = ccurl_easy_init(functions) else {
            return .failure(.transport(code: .unknown, message: "libcurl could not start a transfer"))
        }
        var headerList: UnsafeMutableRawPointer?
        // The header list must outlive the transfer: freed after the handle.
        defer {
            ccurl_easy_cleanup(functions, handle)
            if let headerList { ccurl_slist_free_all(functions, headerList) }
        }
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            // A header line cannot hold a line break: libcurl would send the rest as a header of its own.
            guard !(name + value).contains(where: \.isNewline) else { continue }
            guard let appended = ccurl_slist_append(functions, headerList, "\(name): \(value)") else {
                return .failure(.transport(code: .unknown, message: "out of memory"))
            }
            headerList = appended
        }
        var errorBuffer = [CChar](repeating: 0, count: CCURL_ERROR_SIZE)
        let context = Unmanaged.passUnretained(self).toOpaque()

        let code: Int = errorBuffer.withUnsafeMutableBufferPointer { errorBuffer in
            let long = { (option: Int, value: Int) in ccurl_setopt_long(functions, handle, option, value) }
            // libcurl copies the strings it is given.
            let text = { (option: Int, value: String) in ccurl_setopt_string(functions, handle, option, value) }
            let pointer = { (option: Int, value: UnsafeRawPointer?) in ccurl_setopt_pointer(functions, handle, option, value) }
            let setup = [
                text(CCURLOPT_URL, url.absoluteString),
                long(CCURLOPT_HTTPGET, 1),
                // Threads, not signals: a signal would reach whatever the process is doing.
                long(CCURLOPT_NOSIGNAL, 1),
                // As URLSession did: redirects followed, over http and https only.
                long(CCURLOPT_FOLLOWLOCATION, 1),
                long(CCURLOPT_MAXREDIRS, Self.maxRedirects),
                long(CCURLOPT_PROTOCOLS, CCURLPROTO_HTTP | CCURLPROTO_HTTPS),
                long(CCURLOPT_REDIR_PROTOCOLS, CCURLPROTO_HTTP | CCURLPROTO_HTTPS),
                text(CCURLOPT_USERAGENT, options.userAgent),
                // "": every encoding this libcurl decodes (gzip…), decoded before the body callback.
                text(CCURLOPT_ACCEPT_ENCODING, ""),
                long(CCURLOPT_TIMEOUT_MS, options.timeoutMilliseconds),
                options.caFile.map { text(CCURLOPT_CAINFO, $0) } ?? CCURLE_OK,
                // Refused before the body when Content-Length announces more; counted below otherwise.
                ccurl_setopt_int64(functions, handle, CCURLOPT_MAXFILESIZE_LARGE, Int64(options.maxBodySize)),
                pointer(CCURLOPT_ERRORBUFFER, errorBuffer.baseAddress),
                ccurl_setopt_data_callback(functions, handle, CCURLOPT_WRITEFUNCTION, receiveBody),
                pointer(CCURLOPT_WRITEDATA, context),
                ccurl_setopt_data_callback(functions, handle, CCURLOPT_HEADERFUNCTION, receiveHeader),
                pointer(CCURLOPT_HEADERDATA, context),
                long(CCURLOPT_NOPROGRESS, 0),
                ccurl_setopt_progress_callback(functions, handle, CCURLOPT_XFERINFOFUNCTION, checkCancelled),
                pointer(CCURLOPT_XFERINFODATA, context),
                headerList.map { pointer(CCURLOPT_HTTPHEADER, $0) } ?? CCURLE_OK,
            ]
            if let failed = setup.first(where: { $0 != CCURLE_OK }) { return failed }
            let performed = ccurl_easy_perform(functions, handle)
            // The buffer is valid only in this closure.
            _ = pointer(CCURLOPT_ERRORBUFFER, nil)
            return performed
        }

        if isCancelled { return .cancelled }
        if tooLarge || code == CCURLE_FILESIZE_EXCEEDED { return .failure(.bodyTooLarge(limit: options.maxBodySize)) }
        guard code == CCURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
            let message = detail.isEmpty ? String(cString: ccurl_easy_strerror(functions, code)) : detail
            return .failure(.transport(code: Self.urlErrorCode(code), message: message))
        }
        var status = 0
        var effectiveURL: UnsafePointer<CChar>?
        _ = ccurl_getinfo_long(functions, handle, CCURLINFO_RESPONSE_CODE, &status)
        _ = ccurl_getinfo_string(functions, handle, CCURLINFO_EFFECTIVE_URL, &effectiveURL)
        let answered = effectiveURL.flatMap { URL(string: String(cString: $0)) } ?? url
        return .response(body, HTTPResponse(url: answered, statusCode: status, headerFields: fields))
    }

    /// A chunk of the body; false (abort) once the body would pass the limit.
    fileprivate func receive(body chunk: UnsafeRawBufferPointer) -> Bool {
        guard body.count + chunk.count <= options.maxBodySize else {
            tooLarge = true
            body = Data()
            return false
        }
        body.append(contentsOf: chunk)
        return true
    }

    /// One header line. A status line starts a new response (after a redirect or a 100 Continue):
    /// only the last response's fields are kept.
    fileprivate func receive(headerLine: UnsafeRawBufferPointer) {
        let line = String(decoding: headerLine, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            fields = [:]
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingWhitespace(andNewlines: false)
        let value = line[line.index(after: colon)...].trimmingWhitespace(andNewlines: true)
        guard !name.isEmpty else { return }
        // A field sent twice is one list, as HTTP defines it.
        if let key = fields.keys.first(where: { $0.lowercased() == name.lowercased() }), let earlier = fields[key] {
            fields[key] = earlier + ", " + value
        } else {
            fields[name] = value
        }
    }

    /// The code that names what libcurl's `code` means (as URLSession would report it).
    private static func urlErrorCode(_ code: Int) -> HTTPClientError.TransportCode {
        switch code {
        case CCURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case CCURLE_URL_MALFORMAT: .badURL
        case CCURLE_COULDNT_RESOLVE_HOST, CCURLE_COULDNT_RESOLVE_PROXY: .cannotFindHost
        case CCURLE_COULDNT_CONNECT: .cannotConnectToHost
        case CCURLE_OPERATION_TIMEDOUT: .timedOut
        case CCURLE_TOO_MANY_REDIRECTS: .httpTooManyRedirects
        case CCURLE_PEER_FAILED_VERIFICATION, CCURLE_SSL_ISSUER_ERROR: .serverCertificateUntrusted
        case CCURLE_SSL_CONNECT_ERROR, CCURLE_SSL_CIPHER, CCURLE_SSL_CERTPROBLEM, CCURLE_SSL_CACERT_BADFILE,
             CCURLE_SSL_CRL_BADFILE, CCURLE_SSL_CLIENTCERT:
            .secureConnectionFailed
        case CCURLE_GOT_NOTHING, CCURLE_WEIRD_SERVER_REPLY: .badServerResponse
        case CCURLE_SEND_ERROR, CCURLE_RECV_ERROR, CCURLE_PARTIAL_FILE, CCURLE_HTTP2, CCURLE_HTTP2_STREAM: .networkConnectionLost
        case CCURLE_BAD_CONTENT_ENCODING: .cannotDecodeContentData
        default: .unknown
        }
    }
}

// libcurl's callbacks: C function pointers, so they capture nothing; `context` is the request.
// libcurl gives the size of a byte as 1: `count` bytes arrived.

private func curlRequest(_ context: UnsafeMutableRawPointer?) -> CurlRequest? {
    context.map { Unmanaged<CurlRequest>.fromOpaque($0).takeUnretainedValue() }
}

private func receiveBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size &* count
    guard let request = curlRequest(context) else { return 0 }
    return request.receive(body: UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

private func receiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size &* count
    curlRequest(context)?.receive(headerLine: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

private func checkCancelled(_ context: UnsafeMutableRawPointer?, _: Int64, _: Int64, _: Int64, _: Int64) -> Int32 {
    curlRequest(context)?.isCancelled == false ? 0 : 1
}

extension Substring {
    /// Without the whitespace at its ends, as Foundation's `CharacterSet.whitespaces` counts it
    /// (Unicode's space separators, the tab and the zero-width space), scalar by scalar; with
    /// `andNewlines`, as `.whitespacesAndNewlines` does (also line and paragraph separators,
    /// U+000A to U+000D and U+0085).
    fileprivate func trimmingWhitespace(andNewlines: Bool) -> String {
        let isWhitespace = { (scalar: Unicode.Scalar) -> Bool in
            switch scalar.properties.generalCategory {
            case .spaceSeparator: true
            case .lineSeparator, .paragraphSeparator: andNewlines
            default: scalar == "\t" || scalar == "\u{200B}" || andNewlines && ((0x0A...0x0D).contains(scalar.value) || scalar == "\u{85}")
            }
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }), let last = scalars.lastIndex(where: { !isWhitespace($0) }) else { return "" }
        return String(Substring(scalars[first...last]))
    }
}
