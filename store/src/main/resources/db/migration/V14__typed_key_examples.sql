-- Tables of the examples with keys of other types (K6 in docs/spec.md). Like V2's, they double as
-- test and benchmark fixtures.

-- example.normalize-handles: keyed by a uuid.
create table example_accounts (
    id     uuid primary key,
    handle text not null
);

-- example.order-lines: keyed by a tuple; a batch boundary may fall inside an order.
create table example_order_lines (
    order_id       bigint  not null,
    line_no        integer not null,
    sku            text    not null,
    sku_normalized text,
    primary key (order_id, line_no)
);

-- example.daily-views: page views counted per day into example_daily_views.
create table example_page_views (
    viewed_at timestamptz not null,
    path      text        not null
);

create index example_page_views_viewed_at_idx on example_page_views (viewed_at);

create table example_daily_views (
    day   date   primary key,
    views bigint not null
);

-- A batch fault of a typed example names its key as the API shows it: "0b6a…", [1042, 3].
alter table example_faults add column typed_key jsonb;
