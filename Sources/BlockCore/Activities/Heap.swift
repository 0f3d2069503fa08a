/// A binary min-heap: the earliest of many pending instants in O(1), a push or a pop in
/// O(log n). Callers delete lazily: an element that no longer holds is left in place and
/// skipped when it reaches the top (`ActivityIndex`), which keeps every update logarithmic.
struct Heap<Element: Comparable>: Sendable where Element: Sendable {
    private(set) var elements: [Element] = []

    init(_ elements: [Element] = []) {
        self.elements = elements
        for i in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    var count: Int { elements.count }
    var min: Element? { elements.first }

    mutating func push(_ element: Element) {
        elements.append(element)
        var child = elements.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child] < elements[parent] else { break }
            elements.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popMin() -> Element? {
        guard !elements.isEmpty else { return nil }
        elements.swapAt(0, elements.count - 1)
        let top = elements.removeLast()
        siftDown(0)
        return top
    }

    /// Calls `body` for every element for which `isDue` holds, given that `isDue` never holds
    /// for an element when it fails for a smaller one: O(due elements), not O(n).
    func forEach(while isDue: (Element) -> Bool, _ body: (Element) -> Void) {
        var stack = elements.isEmpty ? [] : [0]
        while let i = stack.popLast() {
            guard isDue(elements[i]) else { continue }
            body(elements[i])
            for child in [2 * i + 1, 2 * i + 2] where child < elements.count { stack.append(child) }
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < elements.count && elements[left] < elements[smallest] { smallest = left }
            if right < elements.count && elements[right] < elements[smallest] { smallest = right }
            guard smallest != parent else { return }
            elements.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
