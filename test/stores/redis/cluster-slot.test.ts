// The key-to-slot function against the slots a real Redis Cluster node gives (CLUSTER KEYSLOT, Redis 7.0).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterSlot, keyBeside } from '../../../src/stores/redis/cluster-slot.js';

describe('clusterSlot', () => {
  it('gives the slot Redis gives, hash tags included', () => {
    const slots: Record<string, number> = {
      // The CRC16/XMODEM check value, 0x31C3.
      '123456789': 12_739,
      foo: 12_182,
      bar: 5061,
      hello: 866,
      ü: 9552,
      '{user1000}.following': 3443,
      // An empty tag hashes the whole key; only the first tag counts; a tag may hold an opening brace.
      'foo{}{bar}': 8363,
      '{}': 15_257,
      'foo{bar}{zap}': 5061,
      'foo{{bar}}zap': 4015,
      'a{b': 13_340,
      // A closing brace before any opening one, or before the tag, is just a character.
      'a}b': 7866,
      '}{a}': 15_495,
      'x{y}z': 12_222,
      '': 0,
    };
    for (const [key, slot] of Object.entries(slots)) assert.equal(clusterSlot(key), slot, key);
  });
});

describe('keyBeside', () => {
  it('names a key of its own in the slot of a bucket key', () => {
    assert.equal(keyBeside('scope|alice', 'probe:'), 'probe:{scope|alice}');
    assert.equal(keyBeside('{scope|alice}:burst', 'probe:'), 'probe:{scope|alice}');
    for (const key of ['scope|alice', '{scope|alice}:burst', 's-abc|~Vq3', '{s|b}:daily'])
      assert.equal(clusterSlot(keyBeside(key, 'probe:')), clusterSlot(key), key);
  });
});
