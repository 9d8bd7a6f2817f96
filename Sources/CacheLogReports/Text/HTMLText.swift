import CacheLog
import FeedCache
import FeedCacheLog
/// Text for the report page: escaped for where it goes, so that a key can hold anything (`<`,
/// quotes, `</script>`, emoji) and still be only text on the page.
package enum HTMLText {
    /// For element text and quoted attribute values.
    package static func escaped(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// JSON made safe inside `<script type="application/json">`: the only way out of a script
    /// element is `</script` (and `<!--` changes how it ends), so every `<` is written `\u003c`.
    /// In JSON a `<` can only stand inside a string, where the escape means the same character.
    /// U+2028 and U+2029 are escaped too, for readers that still treat them as line ends.
    package static func scriptJSON(_ json: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 64)
        var index = 0
        while index < json.count {
            let byte = json[index]
            if byte == UInt8(ascii: "<") {
                out += Array(#"\u003c"#.utf8)
            } else if byte == 0xE2, index + 2 < json.count, json[index + 1] == 0x80, json[index + 2] == 0xA8 || json[index + 2] == 0xA9 {
                out += Array((json[index + 2] == 0xA8 ? #"\u2028"# : #"\u2029"#).utf8)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
