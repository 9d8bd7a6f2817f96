/// `1 checkpoint`, `2 checkpoints`, `0 records`: a count and its noun, singular only for one.
func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
