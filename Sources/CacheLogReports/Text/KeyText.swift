import CacheLog
import FeedCache
import FeedCacheLog
/// A key as text shows it (the audit's tables, the report page): one line, nothing that moves or
/// reorders the text around it, so that a key cannot pass for another.
package enum KeyText {
    /// `text` with tabs, newlines and other control characters written as `\t`, `\n`, `\r` and
    /// `\u{1b}`, and a backslash as `\\` so that the escapes are unambiguous.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0) || $0 == "\\" }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            default:
                if needsEscape(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// Control characters, and the characters that move or reorder text without showing: line
    /// and paragraph separators and the bidirectional controls (U+202E would print the rest of a
    /// row right to left, so a key could pass for another). Zero-width joiners stay, since emoji
    /// sequences are made of them.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return scalar.properties.generalCategory == .control
        }
    }
}
