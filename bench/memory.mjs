export async function benchMemory() { throw new Error('todo') }
