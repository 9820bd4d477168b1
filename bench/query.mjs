export async function benchQuery() { throw new Error('todo') }
