//! The token trie: every normal token's bytes in one prefix tree, flattened in
//! depth-first preorder, and the [`ByteRecognizer`] interface through which grammar code
//! walks it.

/// One node of the flattened trie. Nodes are stored in depth-first preorder, so a node's
/// subtree is the index range `self+1 .. subtree_end`, and skipping a dead subtree is one jump.
#[derive(Debug, Clone, Copy)]
struct TrieNode {
    /// One past the last node of this node's subtree.
    subtree_end: u32,
    /// Tokens ending at this node are `token_ids[tokens_start .. next node's tokens_start]`.
    tokens_start: u32,
    /// Depth = length of the byte string this node spells.
    depth: u16,
    /// The last byte of the string this node spells.
    byte: u8,
}

/// Something that reads bytes one at a time and can undo them: a DFA state stack, a parser.
pub trait ByteRecognizer {
    /// Tries to read `byte`. Returns false (and changes nothing) if no match can follow.
    fn push_byte(&mut self, byte: u8) -> bool;
    /// Undoes the last `n` successful `push_byte` calls.
    fn pop_bytes(&mut self, n: usize);
}

/// A trie over the byte strings of all normal tokens.
#[derive(Debug, Clone)]
pub struct TokenTrie {
    nodes: Vec<TrieNode>,
    token_ids: Vec<u32>,
    max_depth: usize,
    /// Per node: the bytes of its children, folded to 64 bits (bit `byte % 64`), for a
    /// quick "can any child start one of these terminals?" test.
    child_bits: Vec<u64>,
    /// Per node: the depth of the deepest node of its subtree (the longest token below).
    deepest: Vec<u16>,
    /// `reaching[d]`: how many nodes have a node deeper than `d` in their subtree (what a
    /// walk of the tokens longer than `d` may visit at most).
    reaching: Vec<u32>,
    /// Token ids, the longest tokens first, and their lengths.
    longest_first: Vec<u32>,
    longest_first_len: Vec<u16>,
}

impl TokenTrie {
    /// Builds the trie of `(id, bytes)` pairs (bytes non-empty, at most 65535 long).
    pub(crate) fn build(tokens: &[(u32, &[u8])]) -> TokenTrie {
        let mut order: Vec<usize> = (0..tokens.len()).collect();
        order.sort_unstable_by(|&a, &b| tokens[a].1.cmp(tokens[b].1).then(tokens[a].0.cmp(&tokens[b].0)));
        let mut nodes = vec![TrieNode { subtree_end: 0, tokens_start: 0, depth: 0, byte: 0 }];
        let mut token_ids = Vec::with_capacity(tokens.len());
        // open[d] = index of the node at depth d on the current path.
        let mut open: Vec<usize> = vec![0];
        let mut prev: &[u8] = &[];
        let mut max_depth = 0;
        for &k in &order {
            let (id, bytes) = tokens[k];
            let lcp = prev.iter().zip(bytes).take_while(|(a, b)| a == b).count();
            while open.len() > lcp + 1 {
                let done = open.pop().unwrap_or(0);
                nodes[done].subtree_end = nodes.len() as u32;
            }
            for (d, &byte) in bytes.iter().enumerate().skip(lcp) {
                open.push(nodes.len());
                nodes.push(TrieNode { subtree_end: 0, tokens_start: token_ids.len() as u32, depth: (d + 1) as u16, byte });
            }
            // Sorted order guarantees the last node is the one spelling `bytes`.
            token_ids.push(id);
            max_depth = max_depth.max(bytes.len());
            prev = bytes;
        }
        while let Some(done) = open.pop() {
            nodes[done].subtree_end = nodes.len() as u32;
        }
        // Sentinel so that the last node's token range has an end.
        nodes.push(TrieNode { subtree_end: 0, tokens_start: token_ids.len() as u32, depth: 0, byte: 0 });
        let mut child_bits = vec![0u64; nodes.len()];
        // Each node's parent is the nearest earlier node one level up (preorder).
        let mut path: Vec<usize> = vec![0];
        for (i, node) in nodes.iter().enumerate().take(nodes.len() - 1).skip(1) {
            path.truncate(node.depth as usize);
            if let Some(&parent) = path.last() {
                child_bits[parent] |= 1 << (node.byte & 63);
            }
            path.push(i);
        }
        let deepest = Self::deepest_below(&nodes);
        // reaching[d] = number of nodes whose deepest is over d: a suffix sum of counts.
        let mut reaching = vec![0u32; max_depth + 1];
        for &d in &deepest[1..nodes.len() - 1] {
            reaching[d as usize - 1] += 1;
        }
        for d in (0..max_depth).rev() {
            reaching[d] += reaching[d + 1];
        }
        let mut by_len: Vec<(u16, u32)> = tokens.iter().map(|t| (t.1.len() as u16, t.0)).collect();
        by_len.sort_unstable_by_key(|&(len, id)| (std::cmp::Reverse(len), id));
        let (longest_first_len, longest_first) = by_len.into_iter().unzip();
        TokenTrie { nodes, token_ids, max_depth, child_bits, deepest, reaching, longest_first, longest_first_len }
    }

    /// Per node of a preorder trie (sentinel last): the depth of its subtree's deepest node.
    fn deepest_below(nodes: &[TrieNode]) -> Vec<u16> {
        let n = nodes.len() - 1;
        let mut deepest: Vec<u16> = nodes.iter().map(|x| x.depth).collect();
        // Parent of each node (the nearest earlier node one level up), then fold upwards in
        // reverse preorder: children come after their parent.
        let mut parent = vec![0usize; n];
        let mut path: Vec<usize> = vec![0];
        for (i, node) in nodes.iter().enumerate().take(n).skip(1) {
            path.truncate(node.depth as usize);
            parent[i] = *path.last().unwrap_or(&0);
            path.push(i);
        }
        for i in (1..n).rev() {
            let d = deepest[i];
            let p = &mut deepest[parent[i]];
            *p = (*p).max(d);
        }
        deepest
    }

    /// For each node of `sub` (a trie over some of this trie's tokens), the node of this
    /// trie that spells the same bytes.
    pub(super) fn map_nodes(&self, sub: &TokenTrie) -> Vec<u32> {
        let mut out = vec![0u32; sub.nodes.len()];
        // path[d]: this trie's node for the current `sub` node's ancestor at depth d.
        let mut path: Vec<u32> = vec![0];
        let last = sub.nodes.len() - 1;
        for (slot, node) in out[1..last].iter_mut().zip(&sub.nodes[1..last]) {
            path.truncate(node.depth as usize);
            let parent = *path.last().unwrap_or(&0);
            // Every prefix of a token of `sub` is a node here: the child always exists.
            let here = self.children(parent).find(|&(_, b)| b == node.byte).map_or(0, |(c, _)| c);
            *slot = here;
            path.push(here);
        }
        out
    }

    /// Number of trie nodes (the root included).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Length in bytes of the longest token.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Walks the trie with `rec`, pruning every subtree whose prefix `rec` rejects, and calls
    /// `allow(token_id)` for every token whose whole byte string `rec` read. `rec` is left as
    /// it was.
    pub fn walk<R: ByteRecognizer, F: FnMut(u32)>(&self, rec: &mut R, mut allow: F) {
        self.walk_nodes(0, rec, |_, _, tokens| tokens.iter().for_each(|&t| allow(t)));
    }

    /// Walks the subtree below `root` (0 = the whole trie; `rec` stands at `root`'s
    /// string). After each byte `rec` accepts, calls `on_node(rec, node, tokens)` with the
    /// node's index and the tokens ending there. `rec` is left as it was.
    pub fn walk_nodes<R: ByteRecognizer, F: FnMut(&mut R, u32, &[u32])>(&self, root: u32, rec: &mut R, mut on_node: F) {
        let nodes = &self.nodes[..];
        let root = root as usize;
        let end = if root == 0 { nodes.len() - 1 } else { nodes[root].subtree_end as usize };
        let base = nodes[root].depth as usize;
        let mut depth = 0usize; // bytes pushed into rec below the root
        let mut i = root + 1;
        while i < end {
            let node = nodes[i];
            let parent_depth = node.depth as usize - 1 - base;
            if depth > parent_depth {
                rec.pop_bytes(depth - parent_depth);
                depth = parent_depth;
            }
            if rec.push_byte(node.byte) {
                depth += 1;
                let (a, b) = (node.tokens_start as usize, nodes[i + 1].tokens_start as usize);
                on_node(rec, i as u32, &self.token_ids[a..b]);
                i += 1;
            } else {
                i = node.subtree_end as usize;
            }
        }
        rec.pop_bytes(depth);
    }

    /// [`TokenTrie::walk_nodes`] from the root for the tokens longer than `depth` only:
    /// subtrees with no node deeper than `depth` are skipped, and `on_node` is called for
    /// the nodes deeper than `depth` alone.
    pub fn walk_nodes_deeper<R: ByteRecognizer, F: FnMut(&mut R, u32, &[u32])>(&self, depth: usize, rec: &mut R, mut on_node: F) {
        let nodes = &self.nodes[..];
        let end = nodes.len() - 1;
        let mut pushed = 0usize;
        let mut i = 1;
        while i < end {
            let node = nodes[i];
            if self.deepest[i] as usize <= depth {
                i = node.subtree_end as usize;
                continue;
            }
            let parent_depth = node.depth as usize - 1;
            if pushed > parent_depth {
                rec.pop_bytes(pushed - parent_depth);
                pushed = parent_depth;
            }
            if rec.push_byte(node.byte) {
                pushed += 1;
                if node.depth as usize > depth {
                    let (a, b) = (node.tokens_start as usize, nodes[i + 1].tokens_start as usize);
                    on_node(rec, i as u32, &self.token_ids[a..b]);
                }
                i += 1;
            } else {
                i = node.subtree_end as usize;
            }
        }
        rec.pop_bytes(pushed);
    }

    /// How many nodes lead to a token longer than `depth`: at most what
    /// [`TokenTrie::walk_nodes_deeper`] visits.
    pub fn nodes_reaching_deeper(&self, depth: usize) -> usize {
        self.reaching.get(depth).map_or(0, |&r| r as usize)
    }

    /// The tokens longer than `depth` bytes.
    pub fn tokens_longer_than(&self, depth: usize) -> &[u32] {
        let n = self.longest_first_len.partition_point(|&len| len as usize > depth);
        &self.longest_first[..n]
    }

    /// The depth of `node` (the length of the string it spells).
    pub fn node_depth(&self, node: u32) -> usize {
        self.nodes[node as usize].depth as usize
    }

    /// The tokens `rec` refuses, a subtree at a time: walks the trie as
    /// [`TokenTrie::walk`] does, and calls `refuse(tokens)` with the tokens of each
    /// subtree whose prefix `rec` rejects. After each byte `rec` accepts, `skip(rec, node)`
    /// may vouch for the whole subtree below `node`, which is then not read. Where `rec`
    /// accepts most tokens this touches far fewer than all of them.
    pub fn refused<R, S, F>(&self, rec: &mut R, mut skip: S, mut refuse: F)
    where
        R: ByteRecognizer,
        S: FnMut(&R, u32) -> bool,
        F: FnMut(&[u32]),
    {
        let nodes = &self.nodes[..];
        let end = nodes.len() - 1;
        let mut depth = 0usize;
        let mut i = 1;
        while i < end {
            let node = nodes[i];
            let parent_depth = node.depth as usize - 1;
            if depth > parent_depth {
                rec.pop_bytes(depth - parent_depth);
                depth = parent_depth;
            }
            if !rec.push_byte(node.byte) {
                let (a, b) = (node.tokens_start as usize, nodes[node.subtree_end as usize].tokens_start as usize);
                refuse(&self.token_ids[a..b]);
                i = node.subtree_end as usize;
                continue;
            }
            depth += 1;
            i = if skip(rec, i as u32) { node.subtree_end as usize } else { i + 1 };
        }
        rec.pop_bytes(depth);
    }

    /// Per node: are all the bytes below it (of the longer tokens that start with its
    /// string) ones `pred` accepts?
    pub fn below_all(&self, pred: impl Fn(u8) -> bool) -> Vec<bool> {
        let n = self.nodes.len();
        // Preorder: a node's subtree is the nodes after it up to `subtree_end`; count the
        // bytes `pred` refuses up to each node.
        let mut refused = vec![0u32; n + 1];
        for i in 0..n {
            let bad = i > 0 && i < n - 1 && !pred(self.nodes[i].byte);
            refused[i + 1] = refused[i] + u32::from(bad);
        }
        (0..n)
            .map(|i| {
                let end = if i == 0 { n - 1 } else { self.nodes[i].subtree_end as usize };
                i == n - 1 || refused[end] == refused[i + 1]
            })
            .collect()
    }

    /// The bytes of `node`'s children, folded to 64 bits (bit `byte % 64`).
    #[inline]
    pub fn child_bits(&self, node: u32) -> u64 {
        self.child_bits[node as usize]
    }

    /// Does `node` have children (longer tokens below it)?
    pub fn has_children(&self, node: u32) -> bool {
        self.nodes[node as usize].subtree_end > node + 1
    }

    /// The tokens whose bytes end exactly at `node`.
    pub fn tokens_at(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.token_ids[self.nodes[i].tokens_start as usize..self.nodes[i + 1].tokens_start as usize]
    }

    /// The node that spells `bytes` (a prefix of some token), found in `bytes.len()` steps.
    pub fn node_of(&self, bytes: &[u8]) -> Option<u32> {
        bytes.iter().try_fold(0u32, |node, &b| self.children(node).find(|&(_, c)| c == b).map(|(child, _)| child))
    }

    /// The tokens whose bytes start with `prefix` (`prefix` itself included), in byte
    /// order: the subtree of the node that spells `prefix`, found in `prefix.len()` steps.
    pub fn with_prefix(&self, prefix: &[u8]) -> &[u32] {
        let Some(node) = self.node_of(prefix) else {
            return &[];
        };
        let n = &self.nodes[node as usize];
        &self.token_ids[n.tokens_start as usize..self.nodes[n.subtree_end as usize].tokens_start as usize]
    }

    /// One past the last node of `node`'s subtree (nodes are numbered in preorder).
    pub fn subtree_end(&self, node: u32) -> u32 {
        self.nodes[node as usize].subtree_end
    }

    /// The last byte of the string `node` spells.
    pub fn node_byte(&self, node: u32) -> u8 {
        self.nodes[node as usize].byte
    }

    /// The children of `node`: (index, byte) pairs.
    pub fn children(&self, node: u32) -> impl Iterator<Item = (u32, u8)> + '_ {
        let end = self.nodes[node as usize].subtree_end;
        let mut i = node + 1;
        std::iter::from_fn(move || {
            if i >= end {
                return None;
            }
            let idx = i;
            let n = self.nodes[i as usize];
            i = n.subtree_end;
            Some((idx, n.byte))
        })
    }

    /// Heap bytes used.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * (std::mem::size_of::<TrieNode>() + 8 + 2) + self.token_ids.len() * 10 + self.reaching.len() * 4
    }
}
