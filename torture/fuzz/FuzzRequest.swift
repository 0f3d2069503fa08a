// libFuzzer target over the protocol's request parser (§8). Compiled together
// with BlockCore's sources by torture/fuzz/build (swiftc -sanitize=fuzzer). Properties checked
// on every input:
//  - Request.parse never traps, whatever the bytes (any crash is a finding);
//  - an accepted request's canonical line parses back to the same canonical line;
//  - a refusal carries a stable kebab-case code and a one-line message (it goes on the wire).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let line = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let request = try Request.parse(line)
        let canonical = request.line
        do {
            let again = try Request.parse(canonical)
            if again.line != canonical {
                fatalError("canonical form is not stable: \(canonical) -> \(again.line)")
            }
        } catch {
            fatalError("canonical form of an accepted request is refused: \(canonical) -> \(error.code.rawValue) \(error.message)")
        }
    } catch {
        let wire = Response.error(error).line
        if wire.utf8.contains(10) || wire.utf8.contains(13) {
            fatalError("error response spans lines: \(wire.debugDescription)")
        }
        if error.code.rawValue.isEmpty || error.code.rawValue.contains(" ") {
            fatalError("unstable error code '\(error.code.rawValue)'")
        }
    }
    return 0
}
