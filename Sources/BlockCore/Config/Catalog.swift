/// The selections a user can name (§1): the compiled-in catalog, replaced or extended by
/// files in /etc/blockd/selections.d/, plus ad-hoc selections for a bare domain.
public struct Catalog: Sendable {
    /// Keyed by lowercased name: names are matched without regard to case, so two selections
    /// that differ only in case could never both be reached.
    private var byKey: [String: Selection]

    /// Later selections with the same name (ignoring case) replace earlier ones.
    public init(selections: [Selection]) {
        var byKey: [String: Selection] = [:]
        for selection in selections { byKey[selection.name.lowercased()] = selection }
        self.byKey = byKey
    }

    public static var standard: Catalog { Catalog(selections: builtIn) }

    /// This catalog with configured selections added; one with a built-in's name replaces it
    /// whole (an administrator's list is taken as meant, not merged with ours).
    public func merging(_ files: [Selection]) -> Catalog {
        var merged = self
        for selection in files { merged.byKey[selection.name.lowercased()] = selection }
        return merged
    }

    public func selection(named name: String) -> Selection? { byKey[name.lowercased()] }

    public var names: [String] { byKey.values.map(\.name).sorted() }

    public var selections: [Selection] { byKey.values.sorted { $0.name < $1.name } }

    /// What a `start`/`schedule add` argument means: a known selection (any case), else an
    /// ad-hoc selection of one domain if it looks like one (an invalid one is an
    /// `.invalidDomain` error, E1; the domain covers its whole site, W1), of one URL prefix
    /// (`youtube.com/shorts`, E8), or of what a pasted `https://` address names
    /// (`Site.reading`, W1), else `.unknownSelection` with a suggestion.
    public func resolve(_ argument: String) throws(CoreError) -> Selection {
        if let known = selection(named: argument) { return known }
        if AllowOnly.isExpression(argument) { return try resolveAllowOnly(argument) }
        // W1: a pasted address is its site, or its pages' prefix when it has a path.
        if let reading = try Site.reading(url: argument) {
            switch reading.kind {
            case .site: return Selection(name: reading.target, domains: [reading.target])
            case .prefix: return Selection(name: reading.target, paths: [reading.target])
            }
        }
        // E8: `youtube.com/shorts` blocks that prefix in browsers only; its domain is not put
        // into the hosts file, which would block the whole site.
        if URLPrefix.looksLikePrefix(argument) {
            let prefix = try URLPrefix.normalize(argument)
            return Selection(name: prefix, paths: [prefix])
        }
        if Domain.looksLikeDomain(argument) {
            let domain = try Domain.normalize(argument)
            return Selection(name: domain, domains: [domain])
        }
        let unknown = "no selection named \(Domain.quoted(argument, limit: 40))"
        if let near = Suggest.closest(to: argument, among: names) ?? owner(ofSite: argument) {
            throw CoreError(.unknownSelection, "\(unknown); did you mean '\(near)'? 'blockc selections' lists them")
        }
        throw CoreError(.unknownSelection,
                        "\(unknown); 'blockc selections' lists them, and a website can be given as its domain, such as example.com")
    }

    /// W2: `only:a,b` as the selection "everything but a and b", each part resolved as any
    /// argument is (a selection, a site, a page prefix, a pasted address).
    private func resolveAllowOnly(_ expression: String) throws(CoreError) -> Selection {
        var allowed: [Selection] = []
        for part in try AllowOnly.parts(of: expression) {
            let selection = try resolve(part)
            guard !selection.name.contains(",") else {
                throw CoreError(.usage, "'\(selection.name)' has a ',' and cannot be part of an allow-only expression; allow its site \(URLPrefix.host(of: selection.name)) instead")
            }
            if !allowed.contains(where: { $0.name == selection.name }) { allowed.append(selection) }
        }
        var selection = Selection(name: AllowOnly.name(allowing: allowed.map(\.name)))
        selection.allowed = allowed.sorted { $0.name < $1.name }
        return selection
    }

    /// The selection that blocks the site a bare word names (`twitter` → `x`, which lists
    /// twitter.com), for a suggestion when the word is not itself a selection's name.
    private func owner(ofSite word: String) -> String? {
        let site = word.lowercased()
        guard !site.isEmpty, !site.contains(".") else { return nil }
        return selections.first { selection in
            selection.domains.contains { domain in
                let labels = domain.split(separator: ".")
                let first = labels.first == "www" ? labels.dropFirst().first : labels.first
                return first.map(String.init) == site && labels.count >= 2
            }
        }?.name
    }
}

extension Catalog {
    /// The built-in selections.
    ///
    /// Each domain covers its subdomains where the NSS module and browser policies enforce
    /// (W1), but the hosts file has no wildcards (E1), so each entry still lists concrete host
    /// names for it: the apex, `www`, and the hosts the web app and the API clients talk to, plus static/CDN
    /// hosts that belong to the service alone. Hosts shared with other services (fbcdn.net
    /// serves Messenger and WhatsApp too; googlevideo.com serves all of Google) and per-node
    /// CDN names that cannot be enumerated are left out: blocking the names above already stops
    /// the site and the API. Grounded in v2fly/domain-list-community data/*, the StevenBlack
    /// social extension and Pi-hole lists; edit /etc/blockd/selections.d/ to change them.
    ///
    /// `Apps=` names Linux executables looked up in PATH (E2); services without a native Linux
    /// client have none.
    public static let builtIn: [Selection] = [
        Selection(name: "discord", domains: [
            "discord.com", "www.discord.com", "ptb.discord.com", "canary.discord.com",
            "discord.gg", "gateway.discord.gg", "discord.media", "discordapp.com", "www.discordapp.com",
            "cdn.discordapp.com", "media.discordapp.net", "images-ext-1.discordapp.net",
            "images-ext-2.discordapp.net", "dis.gd",
        ], apps: ["discord", "Discord", "discord-ptb", "discord-canary"]),
        Selection(name: "facebook", domains: [
            "facebook.com", "www.facebook.com", "m.facebook.com", "web.facebook.com", "mbasic.facebook.com",
            "touch.facebook.com", "graph.facebook.com", "api.facebook.com", "edge-chat.facebook.com",
            "upload.facebook.com", "connect.facebook.net", "fb.com", "www.fb.com", "fb.me", "fb.watch",
        ]),
        Selection(name: "instagram", domains: [
            "instagram.com", "www.instagram.com", "i.instagram.com", "api.instagram.com",
            "graph.instagram.com", "l.instagram.com", "help.instagram.com",
            "cdninstagram.com", "static.cdninstagram.com", "scontent.cdninstagram.com", "ig.me",
        ]),
        Selection(name: "linkedin", domains: [
            "linkedin.com", "www.linkedin.com", "api.linkedin.com", "lnkd.in",
            "static.licdn.com", "media.licdn.com",
        ]),
        Selection(name: "messenger", domains: [
            "messenger.com", "www.messenger.com", "edge-chat.messenger.com", "m.me",
        ]),
        Selection(name: "netflix", domains: [
            "netflix.com", "www.netflix.com", "api-global.netflix.com", "help.netflix.com",
            "assets.nflxext.com", "codex.nflxext.com",
        ]),
        Selection(name: "pinterest", domains: [
            "pinterest.com", "www.pinterest.com", "api.pinterest.com", "pin.it",
            "i.pinimg.com", "s.pinimg.com",
        ]),
        Selection(name: "reddit", domains: [
            "reddit.com", "www.reddit.com", "old.reddit.com", "new.reddit.com", "np.reddit.com",
            "m.reddit.com", "i.reddit.com", "sh.reddit.com", "oauth.reddit.com", "gql.reddit.com",
            "gateway.reddit.com", "redd.it", "i.redd.it", "v.redd.it", "preview.redd.it",
            "external-preview.redd.it", "www.redditstatic.com", "styles.redditmedia.com",
            "www.redditmedia.com",
        ]),
        Selection(name: "snapchat", domains: [
            "snapchat.com", "www.snapchat.com", "web.snapchat.com", "accounts.snapchat.com",
            "app.snapchat.com", "story.snapchat.com", "cf-st.sc-cdn.net", "bolt-gcdn.sc-cdn.net",
        ]),
        Selection(name: "steam", domains: [
            "steampowered.com", "store.steampowered.com", "api.steampowered.com", "help.steampowered.com",
            "login.steampowered.com", "checkout.steampowered.com", "steamcommunity.com",
            "www.steamcommunity.com", "store.cloudflare.steamstatic.com",
            "community.cloudflare.steamstatic.com", "cdn.cloudflare.steamstatic.com",
            "store.akamai.steamstatic.com", "community.akamai.steamstatic.com",
            "cdn.akamai.steamstatic.com",
        ], apps: ["steam"]),
        Selection(name: "threads", domains: [
            "threads.com", "www.threads.com", "threads.net", "www.threads.net",
        ]),
        Selection(name: "tiktok", domains: [
            "tiktok.com", "www.tiktok.com", "m.tiktok.com", "vm.tiktok.com", "vt.tiktok.com",
            "api.tiktok.com", "webcast.tiktok.com", "tiktokv.com", "tiktokcdn.com", "v16.tiktokcdn.com",
            "p16-tiktokcdn-com.akamaized.net",
        ]),
        Selection(name: "twitch", domains: [
            "twitch.tv", "www.twitch.tv", "m.twitch.tv", "gql.twitch.tv", "api.twitch.tv",
            "id.twitch.tv", "passport.twitch.tv", "player.twitch.tv", "clips.twitch.tv",
            "irc-ws.chat.twitch.tv", "usher.ttvnw.net", "static.twitchcdn.net", "static-cdn.jtvnw.net",
        ]),
        Selection(name: "whatsapp", domains: [
            "whatsapp.com", "www.whatsapp.com", "web.whatsapp.com", "wa.me",
            "static.whatsapp.net", "mmg.whatsapp.net", "pps.whatsapp.net",
        ]),
        Selection(name: "x", domains: [
            "x.com", "www.x.com", "mobile.x.com", "api.x.com", "twitter.com", "www.twitter.com",
            "mobile.twitter.com", "api.twitter.com", "t.co", "abs.twimg.com", "pbs.twimg.com",
            "video.twimg.com",
        ]),
        Selection(name: "youtube", domains: [
            "youtube.com", "www.youtube.com", "m.youtube.com", "youtu.be", "youtubei.googleapis.com",
            "youtube.googleapis.com", "youtube-nocookie.com", "www.youtube-nocookie.com",
            "i.ytimg.com", "s.ytimg.com", "yt3.ggpht.com",
        ]),
    ]
}
