// The demo shop's page logic and the WebMCP tools it registers.
const TEAS = [
  { sku: 'sencha-50', name: 'Sencha', kind: 'green', price: 8.5, grams: 50 },
  { sku: 'gyokuro-30', name: 'Gyokuro', kind: 'green', price: 19.0, grams: 30 },
  { sku: 'assam-100', name: 'Assam Breakfast', kind: 'black', price: 7.0, grams: 100 },
  { sku: 'darjeeling-50', name: 'Darjeeling First Flush', kind: 'black', price: 14.5, grams: 50 },
  { sku: 'tieguanyin-50', name: 'Tie Guan Yin', kind: 'oolong', price: 12.0, grams: 50 },
  { sku: 'rooibos-100', name: 'Rooibos Vanilla', kind: 'herbal', price: 6.5, grams: 100 },
];
const cart = new Map();

const el = (tag, text) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
};

function renderCatalogue() {
  document.getElementById('catalogue').replaceChildren(
    ...TEAS.map((t) => {
      const li = el('li', `${t.name} (${t.kind}, ${t.grams} g) `);
      li.append(el('span', `€${t.price.toFixed(2)}`));
      li.lastChild.className = 'price';
      return li;
    }),
  );
}

function cartSummary() {
  const items = [...cart].map(([sku, quantity]) => {
    const tea = TEAS.find((t) => t.sku === sku);
    return { sku, name: tea.name, quantity, subtotal: +(tea.price * quantity).toFixed(2) };
  });
  const total = +items.reduce((sum, i) => sum + i.subtotal, 0).toFixed(2);
  return { items, total };
}

function renderCart() {
  const { items, total } = cartSummary();
  const list = document.getElementById('cart');
  if (!items.length) {
    const empty = el('li', 'Empty');
    empty.className = 'empty';
    list.replaceChildren(empty);
  } else {
    list.replaceChildren(...items.map((i) => el('li', `${i.quantity} × ${i.name}: €${i.subtotal.toFixed(2)}`)));
  }
  document.getElementById('total').textContent = items.length ? `Total: €${total.toFixed(2)}` : '';
}

function registerTools(modelContext) {
  modelContext.registerTool({
    name: 'search_teas',
    title: 'Search teas',
    description: 'Searches the tea catalogue by name or kind (green, black, oolong, herbal). Returns matching teas with sku and price in euros.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Words to look for in the name or kind' },
        max_price: { type: 'number', description: 'Highest price in euros' },
      },
      required: ['query'],
    },
    annotations: { readOnlyHint: true },
    execute: async ({ query, max_price }) => {
      const words = String(query).toLowerCase().split(/\s+/).filter(Boolean);
      return TEAS.filter((t) => words.some((w) => `${t.name} ${t.kind}`.toLowerCase().includes(w)))
        .filter((t) => max_price === undefined || t.price <= max_price)
        .map(({ sku, name, kind, price, grams }) => ({ sku, name, kind, price, grams }));
    },
  });
  modelContext.registerTool({
    name: 'add_to_cart',
    title: 'Add to cart',
    description: 'Adds a quantity of a tea, by sku, to the shopping cart.',
    inputSchema: {
      type: 'object',
      properties: {
        sku: { type: 'string', enum: TEAS.map((t) => t.sku) },
        quantity: { type: 'integer', minimum: 1, maximum: 20, default: 1 },
      },
      required: ['sku'],
    },
    annotations: { consequentialHint: true },
    execute: async ({ sku, quantity = 1 }) => {
      if (!TEAS.some((t) => t.sku === sku)) throw new Error(`unknown sku ${sku}`);
      cart.set(sku, (cart.get(sku) ?? 0) + quantity);
      renderCart();
      return `Added ${quantity} × ${sku}. Cart total: €${cartSummary().total.toFixed(2)}`;
    },
  });
  modelContext.registerTool({
    name: 'view_cart',
    title: 'View cart',
    description: 'Returns the items in the shopping cart and the total in euros.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    execute: async () => cartSummary(),
  });
}

renderCatalogue();
renderCart();
const status = document.getElementById('webmcp-status');
if (document.modelContext?.registerTool) {
  registerTools(document.modelContext);
  status.textContent = 'WebMCP is on: this page registered 3 tools.';
} else {
  status.textContent = 'This browser has no WebMCP (document.modelContext): start Chromium with --enable-features=WebMCP.';
}
