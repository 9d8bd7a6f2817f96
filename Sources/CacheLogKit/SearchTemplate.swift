/// A search's URL template: `{query}` is filled in percent-encoded, `{page}` with the page number.
public enum SearchTemplate {
    /// `template` with `{query}` (percent-encoded: all but letters, digits and `-._~`) and
    /// `{page}` filled in.
    public static func expand(_ template: String, query: String, page: Int) -> String {
        template.replacing("{page}", with: String(page)).replacing("{query}", with: percentEncoded(query))
    }

    /// `query` as a URL carries it: each UTF-8 byte but RFC 3986's unreserved characters (letters,
    /// digits, `-._~`) written `%XX`, as Foundation's `addingPercentEncoding` writes it.
    private static func percentEncoded(_ query: String) -> String {
        var encoded = ""
        for byte in query.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += byte < 0x10 ? "%0" + hex : "%" + hex
            }
        }
        return encoded
    }
}
