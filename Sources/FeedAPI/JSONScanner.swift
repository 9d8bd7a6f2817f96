/// Checks that bytes are one JSON text (RFC 8259) and copies it without the whitespace between
/// tokens. Every token is copied byte for byte: numbers as written (no `Double` in between, so
/// 9007199254740993 stays itself), strings with their escapes as written.
///
/// Why not `JSONSerialization` or `JSONDecoder`: both hand numbers over as `Double` or fixed-size
/// integers and strings unescaped, so writing the value back changes what the server sent.
package struct JSONScanner {
    /// What a scan found: the compact text and, when it is an array, where each element sits in it.
    package struct Scanned {
        package var compact: [UInt8]
        /// The byte ranges of the top-level array's elements in `compact`; `nil` for any other value.
        package var elements: [Range<Int>]?
    }

    /// Nesting deeper than this is refused, so that hostile input cannot exhaust the stack
    /// (`JSONDecoder` draws the line at the same depth).
    package static let maximumDepth = 512

    /// The scan of `bytes`, or `nil` when they are not exactly one JSON value (surrounding
    /// whitespace and a leading byte order mark allowed) in valid UTF-8.
    package static func scan(_ bytes: [UInt8]) -> Scanned? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        var scanner = JSONScanner(input: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        guard scanner.value() else { return nil }
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { return nil }
        return Scanned(compact: scanner.output, elements: scanner.topLevelArray ? scanner.elements : nil)
    }

    /// Why `bytes` are not one JSON text, in words for ``RemoteLoaderError/invalidData(_:)``:
    /// not UTF-8, nested deeper than ``maximumDepth``, or not JSON at all. `nil` when they are.
    package static func refusal(of bytes: [UInt8]) -> String? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return "the body is not UTF-8" }
        var scanner = JSONScanner(input: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        if scanner.value() {
            scanner.skipWhitespace()
            if scanner.index == bytes.count { return nil }
        }
        return scanner.tooDeep ? "the body nests arrays and objects deeper than \(maximumDepth) levels" : "the body is not JSON"
    }

    private let input: [UInt8]
    private var index = 0
    private var output: [UInt8] = []
    private var depth = 0
    /// Whether the scan stopped at ``maximumDepth``.
    private var tooDeep = false
    private var topLevelArray = false
    private var elements: [Range<Int>] = []

    private init(input: [UInt8]) {
        self.input = input
        output.reserveCapacity(input.count)
    }

    private var current: UInt8? { index < input.count ? input[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    /// Copies the current byte to the output and moves past it.
    private mutating func take() {
        output.append(input[index])
        index += 1
    }

    private mutating func value() -> Bool {
        skipWhitespace()
        guard let byte = current else { return false }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    private mutating func object() -> Bool {
        container(closing: UInt8(ascii: "}")) { scanner in
            guard scanner.current == UInt8(ascii: "\""), scanner.string() else { return false }
            scanner.skipWhitespace()
            guard scanner.current == UInt8(ascii: ":") else { return false }
            scanner.take()
            return scanner.value()
        }
    }

    private mutating func array() -> Bool {
        let isTopLevel = depth == 0
        topLevelArray = topLevelArray || isTopLevel
        return container(closing: UInt8(ascii: "]")) { scanner in
            let start = scanner.output.count
            guard scanner.value() else { return false }
            if isTopLevel { scanner.elements.append(start..<scanner.output.count) }
            return true
        }
    }

    /// An object or an array: its opening byte, members (`member` reads one) separated by
    /// commas, then `closing`; no deeper than ``maximumDepth``.
    private mutating func container(closing: UInt8, member: (inout JSONScanner) -> Bool) -> Bool {
        guard depth < Self.maximumDepth else {
            tooDeep = true
            return false
        }
        depth += 1
        defer { depth -= 1 }
        take()
        skipWhitespace()
        if current == closing { take(); return true }
        while true {
            skipWhitespace()
            guard member(&self) else { return false }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): take()
            case closing: take(); return true
            default: return false
            }
        }
    }

    private mutating func string() -> Bool {
        take()
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                take()
                return true
            case UInt8(ascii: "\\"):
                take()
                guard let escaped = current else { return false }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                     UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    take()
                case UInt8(ascii: "u"):
                    take()
                    for _ in 0..<4 {
                        guard let hex = current, hex.isHexDigit else { return false }
                        take()
                    }
                default:
                    return false
                }
            case 0..<0x20:
                return false
            default:
                take()
            }
        }
        return false
    }

    private mutating func number() -> Bool {
        if current == UInt8(ascii: "-") { take() }
        guard let first = current, first.isDigit else { return false }
        take()
        // A leading zero stands alone: 01 is not a JSON number.
        if first != UInt8(ascii: "0") { takeDigits() }
        if current == UInt8(ascii: ".") {
            take()
            guard current?.isDigit == true else { return false }
            takeDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            take()
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { take() }
            guard current?.isDigit == true else { return false }
            takeDigits()
        }
        return true
    }

    private mutating func takeDigits() {
        while current?.isDigit == true { take() }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let bytes = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard input.count - index >= bytes.count, input[index..<(index + bytes.count)].elementsEqual(bytes) else { return false }
        output.append(contentsOf: bytes)
        index += bytes.count
        return true
    }
}

private extension UInt8 {
    var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isHexDigit: Bool {
        isDigit || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f")) || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
