"""Documents forced through the grammars of bench/bench_cfg.py.

* JSON: generated from a seeded ``random.Random`` (API-like objects: users, orders with
  nested arrays, service configs, GeoJSON, paginated lists, error bodies, catalogs with
  translations, metrics, chat transcripts, audit logs), serialized in several layouts
  (``{"a": 1, "b": 2}``, minified, 2-space and 4-space indentation, tabs, with and
  without ``ensure_ascii``). Every layout stays inside ``json.gbnf``'s limits: at most 16
  whitespace characters in a row and integers of at most 18 digits.
* C-like: programs written by hand for ``tests/corpus/grammars/c.gbnf`` (its exact
  spacing: ``x = y + 1;``, ``if (x < 3) {``, ``for (i = 0; i < n; i = i + 1) {``; no
  comments outside functions, no strings or array indexing).
* SQL: queries for ``tests/corpus/grammars/sql.ebnf`` / ``bench/grammars/sql.gbnf``, and a
  list of labelled extra queries (accepted or not) used to check that the EBNF and the GBNF
  define the same language.
"""

import json
import random

# ----------------------------------------------------------------------------- JSON

FIRST = ["Ana", "Bjørn", "Chloé", "Dmitri", "Emeka", "Fatima", "Giulia", "Hiroshi", "Ines", "José",
         "Kai", "Leila", "Mateo", "Nguyễn", "Olga", "Priya", "Quentin", "Rūta", "Sven", "Zoë"]
LAST = ["Almeida", "Brandt", "Chen", "Dubois", "Eriksen", "Fischer", "García", "Horváth", "Ivanova",
        "Jensen", "Kowalski", "López", "Müller", "Nakamura", "O'Brien", "Patel", "Rossi", "Şahin"]
CITIES = [("Lisbon", "PT", 38.722252, -9.139337), ("Kraków", "PL", 50.064651, 19.944981),
          ("São Paulo", "BR", -23.55052, -46.633308), ("東京", "JP", 35.689487, 139.691706),
          ("Zürich", "CH", 47.376887, 8.541694), ("Nairobi", "KE", -1.292066, 36.821946),
          ("Montréal", "CA", 45.501689, -73.567256), ("Reykjavík", "IS", 64.146582, -21.942635),
          ("Αθήνα", "GR", 37.98381, 23.727539), ("Москва", "RU", 55.755826, 37.6173)]
WORDS = ["alpha", "beta", "cache", "delta", "edge", "fast", "graph", "hash", "index", "json", "kernel",
         "lambda", "mesh", "node", "orbit", "proxy", "queue", "relay", "shard", "token", "vector"]
PRODUCTS = ["USB-C cable 2 m", "Mechanical keyboard (ISO, DE layout)", "27\" 4K monitor", "Noise-cancelling headphones",
            "Espresso beans — 1 kg", "Trail running shoes", "Cast-iron skillet 28 cm", "E-reader 6\"",
            "LEGO® set #42115", "Yoga mat, 6 mm", "Café au lait mug ☕", "Rocket lamp 🚀"]
STATUSES = ["pending", "paid", "packed", "shipped", "delivered", "returned"]
LEVELS = ["debug", "info", "warning", "error"]


def _iso(rng, year=2024):
    return (f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T"
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _uuid(rng):
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _person(rng):
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return first, last, f"{first.lower()}.{last.lower()}@example.com".replace("'", "")


def _user(rng):
    first, last, email = _person(rng)
    return {
        "id": rng.randint(1, 10 ** 6),
        "username": f"{first.lower()}_{rng.randint(10, 99)}",
        "email": email,
        "name": {"first": first, "last": last},
        "age": rng.randint(18, 90),
        "active": rng.random() < 0.8,
        "roles": rng.sample(["admin", "editor", "viewer", "billing", "support"], rng.randint(1, 3)),
        "created_at": _iso(rng, 2021),
        "last_login": _iso(rng) if rng.random() < 0.7 else None,
        "preferences": {"theme": rng.choice(["dark", "light", "system"]),
                        "language": rng.choice(["en-US", "pt-BR", "de-DE", "ja-JP"]),
                        "notifications": {"email": rng.random() < 0.5, "sms": False, "push": True}},
        "score": round(rng.uniform(0, 100), 2),
    }


def _order(rng):
    items = []
    for _ in range(rng.randint(1, 5)):
        items.append({
            "sku": f"SKU-{rng.randint(10000, 99999)}",
            "name": rng.choice(PRODUCTS),
            "quantity": rng.randint(1, 4),
            "unit_price": round(rng.uniform(2, 900), 2),
            "discount": round(rng.uniform(0, 0.3), 2) if rng.random() < 0.3 else None,
            "attributes": {"color": rng.choice(["black", "white", "red"]), "size": rng.choice(["S", "M", "L", "XL"])},
        })
    subtotal = round(sum(i["quantity"] * i["unit_price"] for i in items), 2)
    city, cc, _, _ = rng.choice(CITIES)
    first, last, email = _person(rng)
    return {
        "order_id": f"ORD-2024-{rng.randint(0, 999999):06d}",
        "customer": {"id": rng.randint(1, 10 ** 9), "name": f"{first} {last}", "email": email},
        "items": items,
        "shipping": {"address": {"street": f"{rng.randint(1, 300)} {rng.choice(WORDS).title()} Street",
                                 "city": city, "postal_code": f"{rng.randint(1000, 99999)}", "country": cc},
                     "method": rng.choice(["standard", "express"]), "cost": round(rng.uniform(0, 25), 2)},
        "totals": {"subtotal": subtotal, "tax": round(subtotal * 0.2, 2), "total": round(subtotal * 1.2, 2),
                   "currency": "EUR"},
        "status": rng.choice(STATUSES),
        "history": [{"status": s, "at": _iso(rng)} for s in STATUSES[:rng.randint(1, 4)]],
    }


def _config(rng):
    return {
        "version": f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "server": {"host": "0.0.0.0", "port": rng.choice([80, 443, 8080, 8443]),
                   "tls": {"enabled": True, "cert_path": "/etc/ssl/certs/server.pem",
                           "ciphers": ["TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"]},
                   "workers": rng.randint(1, 64), "graceful_timeout_s": 30},
        "database": {"url": "postgres://app@db.internal:5432/app?sslmode=require",
                     "pool": {"min": 2, "max": rng.randint(8, 128), "timeout_ms": 2500, "idle_ratio": 0.25}},
        "logging": {"level": rng.choice(LEVELS), "format": "%(asctime)s %(levelname)s %(message)s",
                    "outputs": [{"type": "stdout"}, {"type": "file", "path": "C:\\logs\\app.log", "rotate_mb": 64}]},
        "features": {w: rng.random() < 0.5 for w in rng.sample(WORDS, 5)},
        "limits": {"max_body_bytes": 10485760, "rate_per_s": 1.5e3, "burst": 200, "backoff_factor": 1.25e-2},
        "comment": "Generated file.\nDo not edit by hand;\trun `make config` instead.",
    }


def _geo(rng):
    feats = []
    for city, cc, lat, lon in rng.sample(CITIES, rng.randint(2, 4)):
        if rng.random() < 0.5:
            geom = {"type": "Point", "coordinates": [lon, lat]}
        else:
            geom = {"type": "LineString",
                    "coordinates": [[round(lon + rng.uniform(-0.1, 0.1), 6), round(lat + rng.uniform(-0.1, 0.1), 6)]
                                    for _ in range(rng.randint(2, 4))]}
        feats.append({"type": "Feature", "geometry": geom,
                      "properties": {"name": city, "country": cc, "population": rng.randint(10 ** 5, 4 * 10 ** 7),
                                     "elevation_m": round(rng.uniform(-10, 2500), 1), "capital": rng.random() < 0.3}})
    return {"type": "FeatureCollection", "bbox": [-180.0, -90.0, 180.0, 90.0], "features": feats}


def _page(rng):
    data = []
    for _ in range(rng.randint(2, 4)):
        first, last, email = _person(rng)
        data.append({"id": _uuid(rng), "name": f"{first} {last}", "email": email, "verified": rng.random() < 0.5})
    page = rng.randint(1, 40)
    return {"data": data,
            "pagination": {"page": page, "per_page": 25, "total": rng.randint(1000, 5000),
                           "next": f"https://api.example.com/v2/users?page={page + 1}&per_page=25",
                           "prev": None if page == 1 else f"/v2/users?page={page - 1}"},
            "meta": {"request_id": _uuid(rng), "elapsed_ms": round(rng.uniform(1, 300), 3)}}


def _error(rng):
    return {"error": {"code": rng.choice([400, 401, 403, 404, 409, 422, 500]),
                      "type": "validation_error",
                      "message": "Validation failed: \"email\" is not a valid address",
                      "details": [{"field": "email", "issue": "format", "value": "not-an-email"},
                                  {"field": "age", "issue": "minimum", "limit": 18, "value": -3}],
                      "doc_url": "https://docs.example.com/errors#validation_error"},
            "trace_id": _uuid(rng)}


def _catalog(rng):
    items = []
    for name in rng.sample(PRODUCTS, rng.randint(2, 3)):
        items.append({"sku": f"{rng.choice('ABCDEFG')}{rng.randint(100, 999)}", "title": name,
                      "i18n": {"de": f"{name} (Deutsch: größe, Straße)", "ja": "日本語の説明です。",
                               "ru": "Описание товара", "ar": "وصف المنتج"},
                      "price": {"amount": round(rng.uniform(5, 500), 2), "currency": rng.choice(["EUR", "USD", "JPY"])},
                      "tags": rng.sample(WORDS, 3), "in_stock": rng.randint(0, 500),
                      "rating": round(rng.uniform(1, 5), 1), "emoji": rng.choice(["✨", "🔥", "👍🏽", "🇵🇹"])})
    return {"catalog": "spring-2024", "currency_rates": {"USD": 1.0843, "JPY": 163.27}, "items": items}


def _metrics(rng):
    t0 = 1714000000000
    return {"metric": "http.server.duration", "unit": "ms", "host": f"web-{rng.randint(1, 9):02d}",
            "labels": {"route": "/api/v1/orders/{id}", "method": "GET"},
            "points": [[t0 + 60000 * i, round(rng.lognormvariate(3, 0.6), 3)] for i in range(rng.randint(4, 8))],
            "summary": {"count": rng.randint(10 ** 4, 10 ** 7), "sum": rng.uniform(1e6, 1e9), "p99": 812.5,
                        "min": 0.000125, "max": 4.2e4}}


def _chat(rng):
    return {"model": "assistant-7b", "created": 1714003200,
            "messages": [{"role": "system", "content": "You are a helpful assistant.\nAnswer briefly."},
                         {"role": "user", "content": "What's the capital of Australia? Reply as \"City, Country\"."},
                         {"role": "assistant", "content": "Canberra, Australia",
                          "tool_calls": [{"id": "call_1", "type": "function",
                                          "function": {"name": "lookup", "arguments": "{\"q\": \"Canberra\"}"}}]}],
            "usage": {"prompt_tokens": rng.randint(20, 90), "completion_tokens": rng.randint(3, 30)},
            "finish_reason": "stop"}


def _audit(rng):
    return [{"ts": _iso(rng), "actor": _person(rng)[2], "action": rng.choice(["login", "update", "delete", "export"]),
             "target": {"kind": rng.choice(["user", "order", "invoice"]), "id": rng.randint(1, 10 ** 12)},
             "ip": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
             "ok": rng.random() < 0.9, "latency_s": round(rng.expovariate(20), 4)}
            for _ in range(rng.randint(2, 4))]


JSON_KINDS = [_user, _order, _config, _geo, _page, _error, _catalog, _metrics, _chat, _audit]


def _depth(x):
    if isinstance(x, dict):
        return 1 + max((_depth(v) for v in x.values()), default=0)
    if isinstance(x, list):
        return 1 + max((_depth(v) for v in x), default=0)
    return 0


# Layouts: (name, json.dumps kwargs, deepest nesting that keeps every whitespace run <= 16).
LAYOUTS = [
    ("spaced", dict(separators=(", ", ": ")), 99),
    ("indent2", dict(indent=2), 7),
    ("minified", dict(separators=(",", ":")), 99),
    ("tabs", dict(indent="\t"), 15),
    ("indent4", dict(indent=4), 3),
]


def json_documents(n=30, seed=20240501):
    """n JSON documents (text, description), cycling through kinds and layouts."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        kind = JSON_KINDS[i % len(JSON_KINDS)]
        obj = kind(rng)
        name, kwargs, max_depth = LAYOUTS[i % len(LAYOUTS)]
        if _depth(obj) > max_depth:  # too deep for this indentation: use 2-space indentation
            name, kwargs = "indent2", dict(indent=2)
        ensure_ascii = i % 3 == 2
        text = json.dumps(obj, ensure_ascii=ensure_ascii, **kwargs)
        if name not in ("spaced", "minified") and i % 2:
            text += "\n"
        docs.append((text, f"{kind.__name__[1:]} ({name}{', ascii' if ensure_ascii else ''})"))
    return docs


# ----------------------------------------------------------------------------- C-like

C_PROGRAMS = [
    # 1
    """long factorial(int n) {
    // iterative version
    long acc = 1;
    int i;
    for (i = 2; i <= n; i = i + 1) {
        acc = acc * i;
    }
    return acc;
}

long factorial_rec(int n) {
    if (n <= 1) {
        return 1;
    }
    return n * factorial_rec(n - 1);
}
""",
    # 2
    """int gcd(int a, int b) {
    while (b != 0) {
        int t = b;
        b = a % b;
        a = t;
    }
    return a;
}

int lcm(int a, int b) {
    /* divide first to avoid overflow */
    return a / gcd(a, b) * b;
}
""",
    # 3
    """int is_prime(int n) {
    if (n < 2) {
        return 0;
    }
    int d = 2;
    while (d * d <= n) {
        if (n % d == 0) {
            return 0;
        }
        d = d + 1;
    }
    return 1;
}

int count_primes(int limit) {
    int count = 0;
    int k;
    for (k = 2; k < limit; k = k + 1) {
        if (is_prime(k)) {
            count = count + 1;
        }
    }
    return count;
}
""",
    # 4
    """long fib(int n) {
    long a = 0;
    long b = 1;
    while (n > 0) {
        long next = a + b;
        a = b;
        b = next;
        n = n - 1;
    }
    return a;
}

void print_fibs(int count) {
    int i;
    for (i = 0; i < count; i = i + 1) {
        print_long(fib(i));
        putchar('n');
    }
}

int main() {
    print_fibs(20);
    return 0;
}
""",
    # 5
    """int str_length(char* s) {
    int n = 0;
    while (load_char(s, n) != 0) {
        n = n + 1;
    }
    return n;
}

void reverse(char* s) {
    int i = 0;
    int j = str_length(s) - 1;
    while (i < j) {
        char tmp = load_char(s, i);
        store_char(s, i, load_char(s, j));
        store_char(s, j, tmp);
        i = i + 1;
        j = j - 1;
    }
}
""",
    # 6
    """int popcount(long x) {
    int bits = 0;
    while (x > 0) {
        bits = bits + x % 2;
        x = x / 2;
    }
    return bits;
}

long power(long base, int exp) {
    long result = 1;
    while (exp > 0) {
        if (exp % 2 == 1) {
            result = result * base;
        }
        base = base * base;
        exp = exp / 2;
    }
    return result;
}

int isqrt(int n) {
    int lo = 0;
    int hi = n;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (mid <= n / mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}
""",
    # 7
    """void bubble_sort(double* values, int n) {
    int swapped = 1;
    while (swapped) {
        swapped = 0;
        int i;
        for (i = 1; i < n; i = i + 1) {
            if (get(values, i - 1) > get(values, i)) {
                double tmp = get(values, i);
                set(values, i, get(values, i - 1));
                set(values, i - 1, tmp);
                swapped = 1;
            }
        }
        n = n - 1;
    }
}
""",
    # 8
    """int collatz_steps(long n) {
    int steps = 0;
    // stop when the sequence reaches one
    while (n != 1) {
        if (n % 2 == 0) {
            n = n / 2;
        } else {
            n = 3 * n + 1;
        }
        steps = steps + 1;
    }
    return steps;
}

int longest_chain(int limit) {
    int best = 1;
    int best_len = 0;
    int start;
    for (start = 1; start < limit; start = start + 1) {
        int len = collatz_steps(start);
        if (len > best_len) {
            best_len = len;
            best = start;
        }
    }
    return best;
}
""",
    # 9
    """int is_vowel(char c) {
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

int classify(char c) {
    /* 1 = vowel, 2 = consonant, 0 = other */
    if (c >= 'a' && c <= 'z') {
        if (is_vowel(c)) {
            return 1;
        }
        return 2;
    }
    return 0;
}

int count_vowels(char* text, int len) {
    int total = 0;
    int i;
    for (i = 0; i < len; i = i + 1) {
        if (classify(load_char(text, i)) == 1) {
            total = total + 1;
        }
    }
    return total;
}
""",
    # 10
    """long list_sum(long* node) {
    long total = 0;
    while (!is_null(node)) {
        total = total + node_value(node);
        node = node_next(node);
    }
    return total;
}

long* list_find(long* node, long key) {
    while (!is_null(node)) {
        if (node_value(node) == key) {
            return node;
        }
        node = node_next(node);
    }
    return null_node();
}

void list_free(long* node) {
    while (!is_null(node)) {
        long* next = node_next(node);
        release(node);
        node = next;
    }
    return;
}
""",
    # 11 (tabs, a multi-line block comment)
    """int clamp(int x, int lo, int hi) {
\t/*
\t * Clamp x into [lo, hi].
\t * Assumes lo <= hi.
\t */
\tif (x < lo) {
\t\treturn lo;
\t}
\tif (x > hi) {
\t\treturn hi;
\t}
\treturn x;
}

int abs_diff(int a, int b) {
\tif (a > b) {
\t\treturn a - b;
\t}
\treturn b - a;
}
""",
]

# ----------------------------------------------------------------------------- SQL

SQL_QUERIES = [
    "SELECT * FROM users;",
    "SELECT id, name, email FROM users WHERE active = TRUE ORDER BY name ASC LIMIT 50;",
    "select count(*) from orders where status = 'shipped';",
    "SELECT customer_id, SUM(total) AS revenue FROM orders GROUP BY customer_id ORDER BY revenue DESC LIMIT 10;",
    "SELECT o.id, c.name FROM orders o INNER JOIN customers c ON o.customer_id = c.id WHERE o.total > 100.50;",
    "SELECT\n    p.name,\n    p.price * 1.2 AS gross_price\nFROM products p\nWHERE p.stock > 0\n"
    "    AND p.category IN ('books', 'music', 'games')\nORDER BY p.price DESC;",
    "SELECT DISTINCT country FROM customers WHERE country IS NOT NULL;",
    "SELECT name, salary FROM employees WHERE department_id = 3 OR (salary >= 50000 AND salary <= 90000);",
    "SELECT AVG(rating) AS avg_rating, MIN(rating), MAX(rating) FROM reviews WHERE product_id = 42;",
    "SELECT u.name, o.id FROM users u LEFT JOIN orders o ON u.id = o.user_id WHERE o.id IS NULL;",
    "SELECT title FROM books WHERE title LIKE '%SQL%' AND NOT published_year < 2000 ORDER BY title;",
    "SELECT a, b FROM t1, t2 WHERE t1.id = t2.t1_id;",
    "select id from sessions where expires_at < 1700000000 and user_id in (1, 2, 3, 5, 8) limit 100",
    "SELECT department, COUNT(*) AS headcount FROM employees GROUP BY department ORDER BY headcount DESC, department;",
    "SELECT (price - discount) * quantity AS line_total FROM order_items WHERE order_id = 1001;",
    "SELECT name FROM products WHERE price <> 0 AND stock != -1;",
    "SELECT\n\tid,\n\tcreated_at\nFROM events\nWHERE kind = 'click'\n\tAND session_id IS NOT NULL\n"
    "ORDER BY created_at DESC\nLIMIT 500;",
    "SELECT e.name, m.name AS manager FROM employees e RIGHT JOIN employees m ON e.manager_id = m.id;",
    "SELECT SUM(amount) / COUNT(*) AS mean_amount FROM payments WHERE status = 'settled' AND currency = 'EUR';",
    "Select Name From Customers Where City = 'Paris' Order By Name Asc;",
    "SELECT id FROM logs WHERE (level = 'error' OR level = 'fatal') AND message LIKE '%timeout%' "
    "ORDER BY id DESC LIMIT 20;",
    "SELECT x.a + x.b AS s, x.c FROM data x JOIN meta y ON x.id = y.id AND y.flag = FALSE;",
]

# Extra labelled queries for the EBNF-vs-GBNF language check: (query, in the language?).
SQL_EXTRA = [
    ("select distinct a from t", False),           # "DISTINCT" is a case-sensitive string
    ("SELECT a FROM t WHERE", True),               # "WHERE" read as the alias of t
    ("SELECT a FROM t WHERE a", False),
    ("SELECT FROM t", False),
    ("SELECT a FROM t LIMIT -5", False),
    ("SELECT a FROM t1, t2 JOIN t3 ON a = b", False),  # a join only after a single table
    ("SELECT a FROM t ORDER BY a + 1", False),
    ("SELECT a FROM t GROUPBY a", False),
    ("SELECT a FROM t WHERE a IS NOTNULL", False),
    ("SELECT a FROM t;;", False),
    ("SELECT 'it''s' FROM t", False),
    ("SELECT a b FROM t", False),                   # column aliases need AS
    ("SELECT a FROM t u v", False),
    ("SELECT COUNT (*) FROM t", False),
    ("SELECT a FROM t WHERE a = 1.5.2", False),
    ("SELECT a FROM t LIMIT 10 OFFSET 5", False),
    ("SELECT a FROM t OUTER JOIN u ON a = b", True),  # "OUTER" read as the alias of t
    ("SELECT a FROM t LEFT  JOIN u ON a = b", True),  # "LEFT" read as the alias of t
    ("SELECT a FROM t x LEFT  JOIN u ON a = b", False),  # one space inside LEFT JOIN
    ("SELECT a FROM t x OUTER JOIN u ON a = b", False),
    ("SELECT a FROM t ORDER  BY a", False),
    ("ſelect a from t", True),                     # U+017F folds to s under (?i)
    ("SELECT a FROM t WHERE b LIKE 'x'", True),    # U+212A KELVIN SIGN folds to k
    ("SELECT a-1 FROM t", True),
    ("SELECT a FROM t WHERE NOT NOT a = 1", True),
    ("SELECT a FROM t WHERE a IN(1,2)", True),
    ("SELECT a AS b FROM t", True),
    ("SELECT a FROM t WHERE a=1", True),
    ("SELECT a FROM t WHERE a = NULL", True),
    ("SELECT\ta\nFROM\tt", True),
    ("SELECT a FROM t ORDER BY a desc, b asc", True),
    ("SELECT a FROM t JOIN u ON a = b", True),
    ("SELECT a FROM t WHERE a = 1 AND b = 2 OR c = 3 AND NOT d < 4", True),
    ("SELECT a FROM t ;", True),
    ("SELECT a , b FROM t", True),
    ("sElEcT a FrOm t wHeRe a iS nUlL", True),
]
